#!/bin/sh
# Rebuild the bundled inline example. The committed binary was built
# with Debian 12's gcc 12.2; golden -d outputs depend on its code layout.
set -e
cd "$(dirname "$0")"
gcc -O2 -g -o demo demo.c
