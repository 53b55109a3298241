# -*- Python -*-
# lit configuration for Tandem's FileCheck tests.

import os
import subprocess

import lit.formats
from lit.llvm import llvm_config

config.name = "Tandem"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tandem_obj_root, "test")
# Unit/ is a suite of its own (GoogleTest format, found through its site
# config in the build tree); benchmarks/ holds scripts that
# are run by hand, never as tests; Inputs/ holds files tests read.
config.excludes = ["Inputs", "benchmarks", "lit.cfg.py", "CMakeLists.txt"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%tandem_src", config.tandem_src_root))
config.substitutions.append(("%tandem_obj", config.tandem_obj_root))

# test/Install: `%cmake_project_args` configures a project of its own with
# this build's generator and compilers (the installed package finds the MLIR
# it was built with by itself). A sanitizer (fuzz) build's libraries need the
# sanitizer runtimes, which such a project does not link, so there the tests
# that build against them are UNSUPPORTED (feature tandem-fuzz-build).
import shlex

config.substitutions.append(("%cmake_project_args", " ".join(
    shlex.quote(arg) for arg in [
        "-G", config.cmake_generator,
        "-DCMAKE_MAKE_PROGRAM=" + config.cmake_make_program,
        "-DCMAKE_CXX_COMPILER=" + config.cmake_cxx_compiler,
        "-DCMAKE_C_COMPILER=" + config.cmake_c_compiler])))
config.substitutions.append(("%cmake", shlex.quote(config.cmake_command)))
if config.tandem_fuzz in ("ON", "TRUE", "1"):
    config.available_features.add("tandem-fuzz-build")

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

tool_dirs = [config.tandem_tools_dir, config.llvm_tools_dir]
llvm_config.with_environment("PATH", config.tandem_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(["tandem-opt", "tandem-fuzz-replay"], tool_dirs)
for optional_tool in ["tandem-gen", "tandem-fit", "tandem-diagnose", "tandem-device-info",
                      "tandem-run", "tandem-calibrate", "tandem-nccl-bench"]:
    if os.path.exists(os.path.join(config.tandem_tools_dir, optional_tool)):
        llvm_config.add_tool_substitutions([optional_tool], tool_dirs)
        config.available_features.add(optional_tool)

# The CUDA runtime is built only where a CUDA toolkit with cuBLASLt and NCCL
# was found; GPU tests additionally need a usable GPU. Tests that need one
# say `REQUIRES: cuda-gpu` and lit lists them as UNSUPPORTED elsewhere.
if config.tandem_runtime_enabled in ("ON", "TRUE", "1"):
    config.available_features.add("tandem-runtime")
    info = os.path.join(config.tandem_tools_dir, "tandem-device-info")
    if os.path.exists(info):
        try:
            probe = subprocess.run([info, "--require-gpu"], capture_output=True,
                                   text=True, timeout=60)
            if probe.returncode == 0:
                config.available_features.add("cuda-gpu")
            else:
                lit_config.note("GPU tests skipped: " +
                                (probe.stderr.strip() or "no usable CUDA GPU"))
        except (OSError, subprocess.TimeoutExpired) as err:
            lit_config.note("GPU tests skipped: tandem-device-info failed: %s" % err)
else:
    lit_config.note("GPU tests skipped: the CUDA runtime was not built "
                    "(no CUDA toolkit with cuBLASLt and NCCL found)")

# tandem-import is Python on jaxlib's MLIR bindings: its tests need a Python
# that imports jax, the set-up's (<build>/python-venv, made by
# tools/tandem-dev.sh) or else python3 on PATH. `%tandem-import` runs the
# launcher in bin/ when the build configured it, else the package in the
# source tree. Without jax the tests say `REQUIRES: jax` and are UNSUPPORTED.
import shutil

_import_pythons = [os.path.join(config.tandem_obj_root, "python-venv", "bin", "python3"),
                   shutil.which("python3") or ""]
for _py in _import_pythons:
    if not _py or not os.path.exists(_py):
        continue
    try:
        _ok = subprocess.run([_py, "-c", "import jax, jaxlib.mlir.ir"],
                             capture_output=True, timeout=300).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        _ok = False
    if _ok:
        config.available_features.add("jax")
        _launcher = os.path.join(config.tandem_tools_dir, "tandem-import")
        if os.path.exists(_launcher):
            _cmd = "env TANDEM_PYTHON=%s %s" % (_py, _launcher)
        else:
            _cmd = "env PYTHONPATH=%s %s -m tandem_import" % (
                os.path.join(config.tandem_src_root, "tools", "tandem-import"), _py)
        config.substitutions.append(("%tandem-import", _cmd))
        # The same Python, for the installed launcher (test/Install).
        config.substitutions.append(("%tandem_import_python", _py))
        break
else:
    lit_config.note("tandem-import tests skipped: no Python that imports jax "
                    "(bash tools/tandem-dev.sh installs it into <build>/python-venv)")
