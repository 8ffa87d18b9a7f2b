"""Compiles generated tensor-core kernels (attngen tensorcore's NAME_tensorcore.cu) with nvcc.

Usage: check_tensorcore_kernels.py NVCC ARCHS INCLUDE_DIRS KERNEL.cu...
  ARCHS: comma-separated compute capabilities (80,90); INCLUDE_DIRS: colon-separated.

All kernels go through nvcc in one translation unit. For each kernel (the forward pass and the merge
of key splits) and architecture, prints its registers and stack frame (math functions' slow paths
keep one: sinf's argument reduction, 32 bytes); fails when nvcc rejects the code, when a kernel
spills registers to local memory, or when the forward pass's PTX lacks the tensor-core path's
instructions (mma.sync m16n8k16, ldmatrix, cp.async). Exits 77 (skipped) when nvcc is not there.
"""
import os
import re
import subprocess
import sys
import tempfile

INSTRUCTIONS = ("mma.sync.aligned.m16n8k16", "ldmatrix.sync.aligned.m8n8.x4", "cp.async.cg.shared.global")


def nvcc_command(nvcc, includes, source):
    command = [nvcc, "-std=c++20", "-O3", source]
    for directory in includes:
        command += ["-I", directory]
    return command


def ptxas_reports(nvcc, archs, includes, source, work):
    """{(kernel, sm_NN): (registers, stack bytes, spill stores, spill loads)} from ptxas -v."""
    command = nvcc_command(nvcc, includes, source) + ["-c", "-o", os.path.join(work, "kernels.o"),
                                                       "--ptxas-options=-v"]
    for arch in archs:
        command += ["-gencode", "arch=compute_%s,code=sm_%s" % (arch, arch)]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError("nvcc rejected the kernels:\n" + result.stderr)
    reports, current = {}, None
    for line in result.stderr.splitlines():
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


def ptx_entries(nvcc, arch, includes, source, work):
    """{kernel: its PTX body}."""
    ptx = os.path.join(work, "kernels.ptx")
    command = nvcc_command(nvcc, includes, source) + ["-ptx", "-arch=compute_%s" % arch, "-o", ptx]
    subprocess.run(command, capture_output=True, text=True, check=True)
    text = open(ptx).read()
    parts = re.split(r"\.entry\s+(\w+)", text)
    return dict(zip(parts[1::2], parts[2::2]))


def main():
    nvcc, archs, includes, kernels = sys.argv[1], sys.argv[2].split(","), sys.argv[3].split(":"), sys.argv[4:]
    if not os.access(nvcc, os.X_OK):
        print("skipped: nvcc not found (the CUDA toolkit's compiler)")
        return 77
    names = [os.path.basename(k)[: -len(".cu")] for k in kernels]
    failures = []
    with tempfile.TemporaryDirectory() as work:
        source = os.path.join(work, "kernels.cu")
        with open(source, "w") as out:
            for kernel in kernels:
                out.write('#include "%s"\n' % os.path.abspath(kernel))
        includes = includes + sorted({os.path.dirname(os.path.abspath(k)) for k in kernels})
        reports = ptxas_reports(nvcc, archs, includes, source, work)
        entries = ptx_entries(nvcc, archs[0], includes, source, work)
    for name in names:
        for entry in (name + "_forward", name + "_merge"):
            for arch in archs:
                report = reports.get((entry, "sm_" + arch))
                if report is None:
                    failures.append("%s: no ptxas report for sm_%s" % (entry, arch))
                    continue
                registers, stack, stores, loads = report
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


if __name__ == "__main__":
    sys.exit(main())
