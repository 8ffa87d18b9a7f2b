"""Checks the tensor-core kernels (attngen tensorcore's NAME_tensorcore.cu) as nvcc compiled them.

Usage:
  check_tensorcore_kernels.py compile REPORT KEEP_DIR -- NVCC ARGUMENT...
      runs the nvcc command (the build's, which compiles the kernels' device runners) with ptxas's
      report, written to REPORT, and the intermediate files, the PTX among them, kept in KEEP_DIR.
  check_tensorcore_kernels.py check ARCHS REPORT PTX KERNEL.cu...
      ARCHS: comma-separated compute capabilities (80,90); PTX: the first one's, from KEEP_DIR.

So the kernels go through nvcc once, in the build. For each kernel (the forward pass and the merge of
key splits) and architecture, `check` prints its registers and stack frame (math functions' slow
paths keep one: sinf's argument reduction, 32 bytes); it fails when a kernel spills registers to
local memory, or when the forward pass's PTX lacks the tensor-core path's instructions (mma.sync
m16n8k16, ldmatrix, cp.async).
"""
import glob
import os
import re
import subprocess
import sys

INSTRUCTIONS = ("mma.sync.aligned.m16n8k16", "ldmatrix.sync.aligned.m8n8.x4", "cp.async.cg.shared.global")


def compile_keeping_reports(report, keep_dir, command):
    os.makedirs(keep_dir, exist_ok=True)
    result = subprocess.run(command + ["--ptxas-options=-v", "-keep", "-keep-dir", keep_dir],
                            capture_output=True, text=True)
    sys.stdout.write(result.stdout)
    if result.returncode != 0:
        sys.stderr.write(result.stderr)
        return result.returncode
    with open(report, "w") as out:
        out.write(result.stderr)
    # Only the PTX is read later; the preprocessed sources are megabytes each.
    for kept in glob.glob(os.path.join(keep_dir, "*")):
        if not kept.endswith(".ptx"):
            os.remove(kept)
    return 0


def ptxas_reports(text):
    """{(kernel, sm_NN): (registers, stack bytes, spill stores, spill loads)} from ptxas -v."""
    reports, current = {}, None
    for line in text.splitlines():
        entry = re.search(r"Compiling entry function '(\w+)' for '(sm_\d+)'", line)
        if entry:
            current = entry.groups()
        spills = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if spills and current:
            reports[current] = [0] + [int(n) for n in spills.groups()]
        registers = re.search(r"Used (\d+) registers", line)
        if registers and current in reports:
            reports[current][0] = int(registers.group(1))
    return reports


def ptx_entries(text):
    """{kernel: its PTX body}."""
    parts = re.split(r"\.entry\s+(\w+)", text)
    return dict(zip(parts[1::2], parts[2::2]))


def check(archs, report, ptx, kernels):
    names = [os.path.basename(k)[: -len(".cu")] for k in kernels]
    with open(report) as text:
        reports = ptxas_reports(text.read())
    with open(ptx) as text:
        entries = ptx_entries(text.read())
    failures = []
    for name in names:
        for entry in (name + "_forward", name + "_merge"):
            for arch in archs:
                usage = reports.get((entry, "sm_" + arch))
                if usage is None:
                    failures.append("%s: no ptxas report for sm_%s" % (entry, arch))
                    continue
                registers, stack, stores, loads = usage
                print("%-60s sm_%s: %3d registers, %d bytes stack, %d/%d bytes spilled (stores/loads)"
                      % (entry, arch, registers, stack, stores, loads))
                if stores or loads:
                    failures.append("%s spills on sm_%s" % (entry, arch))
        body = entries.get(name + "_forward", "")
        for instruction in INSTRUCTIONS:
            if instruction not in body:
                failures.append("%s_forward: no %s in its PTX" % (name, instruction))
    for failure in failures:
        print("FAILED: " + failure)
    return 1 if failures else 0


def main():
    if len(sys.argv) > 5 and sys.argv[1] == "compile" and sys.argv[4] == "--":
        return compile_keeping_reports(sys.argv[2], sys.argv[3], sys.argv[5:])
    if len(sys.argv) > 5 and sys.argv[1] == "check":
        return check(sys.argv[2].split(","), sys.argv[3], sys.argv[4], sys.argv[5:])
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())

