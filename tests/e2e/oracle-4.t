#!/bin/sh
# oracle.t's checks on shard 4 of 6 of its GGUF files (llama.cpp as the
# oracle for its own buffers; the files shared out so that each test file
# stays under a minute on a loaded machine)
GW_ORACLE_SHARD=4/6
. "$(dirname "$0")/oracle.t"
