#!/usr/bin/python3
"""Generates generic-form MLIR modules (seeded, reproducible) that exercise what the front end must get
right structurally: nested regions, multi-block regions with block arguments and successors, attribute
dicts and properties, dense hex blobs, strings with escapes, multi-result ops and debug locations.

usage: gen_generic.py OUTDIR COUNT
Each module is valid for `mlir-opt --allow-unregistered-dialect`."""
import os
import random
import sys

TYPES = ["tensor<4xf32>", "i32", "tensor<2x8xbf16>", "!d.token", "tensor<?x3xi64>"]


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.n = 0
        self.locs = []

    def name(self):
        self.n += 1
        return "%%v%d" % self.n

    def loc(self):
        kind = self.r.randrange(4)
        if kind == 0:
            return ""
        i = len(self.locs)
        line = self.r.randrange(1, 500)
        if kind == 1:
            self.locs.append('#loc%d = loc("model_%d.py":%d:%d)' % (i, i, line, self.r.randrange(1, 40)))
        elif kind == 2:
            self.locs.append('#loc%d = loc(callsite("f"("a.py":%d:3) at "b.py":%d:5))' % (i, line, line + 1))
        else:
            self.locs.append('#loc%d = loc(fused["x.py":%d:1, "y.py":2:2])' % (i, line))
        return " loc(#loc%d)" % i

    def attrs(self):
        items = []
        for k in range(self.r.randrange(0, 4)):
            v = self.r.choice([
                "1 : i32",
                '"s\\22q\\\\t"',
                "dense<\"0x%s\"> : tensor<%dxi8>" % ("".join(self.r.choice("0123456789ABCDEF") for _ in range(16)), 8),
                "[1, 2, [3, {inner = 4}]]",
                "#d.attr<\"x\", [1, 2]>",
                "{nested = {deeper = unit}}",
                "array<i64: 1, 2>",
                "dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>",
            ])
            items.append("a%d = %s" % (k, v))
        if self.r.random() < 0.1:
            blob = "".join(self.r.choice("0123456789ABCDEF") for _ in range(20000))
            items.append('blob = dense<"0x%s"> : tensor<10000xi8>' % blob)
        return items

    def op(self, avail, depth, indent, terminator_succ=None):
        """Returns (lines, results) for one op."""
        nres = self.r.choice([0, 1, 1, 2, 3])
        res_types = [self.r.choice(TYPES) for _ in range(nres)]
        nops = min(len(avail), self.r.randrange(0, 4))
        operands = self.r.sample(avail, nops) if nops else []
        opname = '"d%d.op%d"' % (self.r.randrange(3), self.r.randrange(20))
        head = ""
        results = []
        if nres == 1:
            nm = self.name()
            head = nm + " = "
            results = [(nm, res_types[0])]
        elif nres > 1:
            nm = self.name()
            head = "%s:%d = " % (nm, nres)
            results = [("%s#%d" % (nm, i), t) for i, t in enumerate(res_types)]
        text = " " * indent + head + opname + "(" + ", ".join(v for v, _ in operands) + ")"
        if terminator_succ:
            text += "[" + ", ".join(terminator_succ) + "]"
        if self.r.random() < 0.3:
            text += " <{prop = %d : i64}>" % self.r.randrange(100)
        lines = []
        regions = []
        if depth < 4 and self.r.random() < 0.35 and not terminator_succ:
            for _ in range(self.r.randrange(1, 3)):
                regions.append(self.region(avail, depth + 1, indent + 2))
        if regions:
            text += " ("
            lines.append(text + "{")
            for i, reg in enumerate(regions):
                lines.extend(reg)
                lines.append(" " * indent + ("}, {" if i + 1 < len(regions) else "})"))
            text = lines.pop()
        a = self.attrs()
        if a:
            text += " {" + ", ".join(a) + "}"
        text += " : (" + ", ".join(t for _, t in operands) + ") -> (" + ", ".join(res_types) + ")"
        text += self.loc()
        lines.append(text)
        return lines, results

    def block(self, avail, depth, indent, args, label, succs):
        lines = []
        if label:
            lines.append(" " * (indent - 2) + label + "(" + ", ".join("%s: %s%s" % (n, t, self.loc()) for n, t in args) + "):")
        local = list(avail) + list(args)
        for i in range(self.r.randrange(1, 5)):
            ls, res = self.op(local, depth, indent)
            lines.extend(ls)
            local.extend(res)
        if succs:
            ls, _ = self.op(local, depth, indent, terminator_succ=succs)
            lines.extend(ls)
        return lines

    def region(self, avail, depth, indent):
        nblocks = self.r.choice([1, 1, 2, 3])
        labels = ["^bb%d" % i for i in range(nblocks)]
        lines = []
        for b in range(nblocks):
            args = [(self.name(), self.r.choice(TYPES)) for _ in range(self.r.randrange(0, 3))]
            succs = labels[b + 1:] if b + 1 < nblocks else None
            # The entry block needs a label only when it has arguments.
            label = labels[b] if (b > 0 or args) else None
            lines.extend(self.block(avail, depth, indent, args, label, succs))
        return lines

    def module(self):
        body = self.block([], 1, 2, [], None, None)
        out = ['"builtin.module"() ({'] + body + ["}) : () -> ()"]
        return "\n".join(out + self.locs) + "\n"


def main():
    outdir, count = sys.argv[1], int(sys.argv[2])
    os.makedirs(outdir, exist_ok=True)
    for i in range(count):
        with open(os.path.join(outdir, "generic_%02d.mlir" % i), "w") as f:
            f.write(Gen(1000 + i).module())


if __name__ == "__main__":
    main()
