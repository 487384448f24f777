"""damage.py truncate|flip IN OUT: writes a damaged copy of a plan.bin."""
import sys

mode, src, dst = sys.argv[1:4]
data = bytearray(open(src, "rb").read())
if mode == "truncate":
    data = data[: len(data) // 2]
elif mode == "flip":
    data[len(data) // 2] ^= 0x10
else:
    sys.exit(f"unknown mode {mode}")
open(dst, "wb").write(bytes(data))
