#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# setinterp.py <ELF in> <interpreter> <ELF out>: a copy of a 64-bit
# little-endian ELF executable whose program interpreter (PT_INTERP) is
# <interpreter>, which must fit in the old one's bytes (the rest is
# zero-filled).  For the QEMU rig's second L1 (mkrig.sh): Debian 13's
# QEMU run by Debian 13's loader at a path of its own.
import os
import struct
import sys

src, interp, dst = sys.argv[1], sys.argv[2].encode(), sys.argv[3]
d = bytearray(open(src, "rb").read())
if d[:4] != b"\x7fELF" or d[4] != 2 or d[5] != 1:
    sys.exit("setinterp: %s: not a 64-bit little-endian ELF" % src)
phoff, = struct.unpack_from("<Q", d, 0x20)
phentsize, phnum = struct.unpack_from("<HH", d, 0x36)
for i in range(phnum):
    ph = phoff + i * phentsize
    p_type, = struct.unpack_from("<I", d, ph)
    if p_type != 3:  # PT_INTERP
        continue
    off, = struct.unpack_from("<Q", d, ph + 8)
    size, = struct.unpack_from("<Q", d, ph + 32)
    if len(interp) + 1 > size:
        sys.exit("setinterp: %s longer than the %d bytes of %s's interpreter"
                 % (interp.decode(), size - 1, src))
    d[off:off + size] = interp + b"\0" * (size - len(interp))
    break
else:
    sys.exit("setinterp: %s: no PT_INTERP" % src)
open(dst, "wb").write(d)
os.chmod(dst, 0o755)
