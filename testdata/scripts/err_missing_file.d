/* args: -s ../../testdata/scripts/no_such_script.d */
