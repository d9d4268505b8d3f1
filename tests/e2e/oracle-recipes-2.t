#!/bin/sh
# oracle-recipes.t's checks on the other half of the quantization recipes
GW_ORACLE_RECIPES=2/2
. "$(dirname "$0")/oracle-recipes.t"
