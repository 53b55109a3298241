# -*- Python -*-
# lit configuration for Tandem's GoogleTest unit tests: every executable in
# the unit-test directory whose name ends in "Tests".

import lit.formats

config.name = "Tandem-Unit"
config.suffixes = []
config.test_exec_root = config.unittest_dir
config.test_source_root = config.unittest_dir
config.test_format = lit.formats.GoogleTest(".", "Tests")
