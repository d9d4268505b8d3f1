#!/usr/bin/python3
# zh-prose.py ALLOW FILE... : runs of English prose (3+ consecutive lowercase English words
# outside quotes, command lines and identifiers) in gpuwise's zh_CN text output
import re, sys
allow = [l.rstrip("\n") for l in open(sys.argv[1], encoding="utf-8") if l.strip() and not l.startswith("#")]
CMD = re.compile(r"^(\$ )?(gpuwise|pip3?|uv|export|sudo|apt(-get)?|ollama|llama-server|llama-cli|vllm|python3?|nvidia-smi|docker|conda|wsl|sh|bash|cmake|make|git|curl|torchrun|accelerate|huggingface-cli|modprobe|dkms|echo|cat|ls|ln|ldconfig|systemctl|--?[a-z])\b")
WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
lines = runs = 0
found = []
for f in sys.argv[2:]:
    for n, line in enumerate(open(f, encoding="utf-8", errors="replace"), 1):
        line = line.rstrip("\n")
        lines += 1
        s = line
        # catalog rows of `list` (an id, then its data and cited source text) are data, not prose
        if "/list-" in "/" + f and re.match(r"^\s*[a-z0-9][a-z0-9.+_-]*(\s{2,}|: )", line):
            continue
        # a cited source: its address and the note quoted from it, to the end of the line
        s = re.sub(r"https?://.*", " ", s)
        # a command inside a Chinese sentence: from the command word to the next CJK character
        s = re.sub(r"\b(sudo|pip3?|export|gpuwise|ollama|llama-server|modprobe|apt(-get)?|dkms|wsl|nvidia-smi|python3?|conda|docker)\b[^\u3000-\uffff]*", " ", s)
        # quoted names, commands and identifiers
        s = re.sub(r"`[^`]*`|'[^']*'|\"[^\"]*\"|“[^”]*”|‘[^’]*’|「[^」]*」", " ", s)
        # URLs, paths, options, key=value, identifiers with _ . / : digits
        s = re.sub(r"https?://\S+|\S*\w\.\w\S*|\S*/\S*|--?[A-Za-z][\w.=:-]*|\S*[_=@~<>{}\[\]]\S*|\S*\d\S*", " ", s)
        # command lines after a Chinese label colon, or the whole line
        parts = re.split(r"[：；，。（）、]|: ", s)
        kept = []
        for p in parts:
            p2 = p.strip().lstrip("$ ")
            if CMD.match(p2):
                continue
            kept.append(p)
        s = " | ".join(kept)
        for seg in re.split(r"[^A-Za-z'’ -]+", s):
            words = WORD.findall(seg)
            # a run: 3+ consecutive words, mostly lowercase (names are Capitalised or ALLCAPS)
            run = []
            for w in words + [None]:
                if w is not None and w[0].islower():
                    run.append(w)
                    continue
                if len(run) >= 3:
                    text = " ".join(run)
                    if not any(re.search(a, text) for a in allow):
                        found.append((f, n, text, line))
                run = [] if w is None or not w[0].islower() else [w]
for f, n, text, line in found:
    print(f"# {f.rsplit('/',1)[-1]}:{n}: «{text}» in: {line.strip()[:160]}")
print(f"lines={lines} runs={len(found)}")
