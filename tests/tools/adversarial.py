#!/usr/bin/env python3
"""Write 4 MiB adversarial inputs for `gpuwise explain` into DIR, one file per
character class: long lines of letters, capitals, digits, spaces,
punctuation, a mix, and lines where every literal of data/errors.tsv recurs
densely between runs of the characters its captures accept (the cases that
made a backtracking or restart-at-every-offset matcher quadratic), and the
status-code catalog's forms recurring densely.  An
optional last argument appends a real message at the very end, which must
still be found.   usage: adversarial.py DIR [TAIL_MESSAGE]"""
import os
import random
import sys

SIZE = 4 << 20
CLASSES = {
    "letters": "abcdefghijklmnopqrstuvwxyz",
    "capitals": "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "digits": "0123456789",
    "spaces": " \t",
    "punct": ".:;,()[]-_/|'\"<>=+*",
    "mixed": "aZ9 ._:(-",
}
NEEDLES = ["out of memory ", "CUDA error: ", "Xid (PCI:0000:01:00): ", "NCCL error ",
           "libcudart.so", " with CUDA capability sm_", "CUDNN_STATUS_", "Process 42 has ",
           "failed to allocate ", "is not compatible with the current PyTorch installation",
           "cannot open shared object file", "GPU ", "Tried to allocate 2.00 GiB"]


def write(path, body, tail):
    data = body[: SIZE - len(tail)] + tail
    with open(path, "w") as f:
        f.write(data)


def main():
    out = sys.argv[1]
    tail = sys.argv[2] if len(sys.argv) > 2 else ""
    os.makedirs(out, exist_ok=True)
    rnd = random.Random(10)
    for name, chars in CLASSES.items():
        line_len = 1 << 20 if name != "mixed" else 4096
        parts, n = [], 0
        while n < SIZE:
            line = "".join(rnd.choices(chars, k=line_len)) + "\n"  # choices: one call a line
            parts.append(line)
            n += len(line)
        write(os.path.join(out, name + ".txt"), "".join(parts), tail)
    # literals with runs of what their captures take: letters, digits, spaces
    parts, n = [], 0
    fill = ["a" * 200, "9" * 200, " " * 200, "A.b-" * 50]
    while n < SIZE:
        for nd in NEEDLES:
            s = fill[n % 4] + nd
            parts.append(s)
            n += len(s)
    write(os.path.join(out, "literals.txt"), "".join(parts), tail)
    # the status-code catalog's forms, densely: printed messages that almost
    # match, numbered forms, Xids, names (explain scans each occurrence)
    cat = ["CUDA error: an illegal memory acces ", "HIP error: invalid device functio ", "Cuda failure 99999999 ",
           "CUDA error 7160000 ", "Xid (PCI:0000:01:00): 1, ", "Xid 9999999 ", "cudaErrorIllegalAddres ",
           "CUBLAS_STATUS_ALLOC_FAILE ", "cusolver error: 70000000 ", "CUFFT error(55555555 "]
    parts, n = [], 0
    while n < SIZE:
        for c in cat:
            parts.append(c)
            n += len(c)
    write(os.path.join(out, "catalog.txt"), "".join(parts), tail)


if __name__ == "__main__":
    main()
