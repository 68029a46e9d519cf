#!/bin/sh
# Compiles lossprobe's native piece (see NativeUdp.java) into the module's classes, so it travels in the jar:
#   build.sh SOURCE OUTPUT.so JAVA_HOME
# Never fails the build: without gcc or the JDK's JNI headers it says so and lossprobe falls back at run time (its
# results then say timestampSource: user).
src="$1"; out="$2"; jdk="$3"
rm -f "$out"
if ! command -v gcc >/dev/null 2>&1; then
  echo "udp-probe: gcc not found: built without the native piece (kernel timestamps, timer slack, pinning)"
  exit 0
fi
if [ ! -f "$jdk/include/jni.h" ]; then
  echo "udp-probe: no JNI headers under $jdk/include: built without the native piece"
  exit 0
fi
mkdir -p "$(dirname "$out")"
# SOURCE and the other .c files beside it (lossprobe_udp_send.c) make one library.
if ! gcc -O2 -shared -fPIC -Wall -I"$jdk/include" -I"$jdk/include/linux" -o "$out" "$src" \
    $(ls "$(dirname "$src")"/*.c | grep -vxF "$src"); then
  rm -f "$out"
  echo "udp-probe: the native piece did not compile: built without it"
fi
exit 0
