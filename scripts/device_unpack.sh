#!/usr/bin/env bash
# Source this on the GPU machine: unpacks .devcarry/payload.tar.xz to /tmp/wgt and sets the
# environment (Vulkan loader from .gl/ debs if the machine has none, NVIDIA ICD, Dawn path).
# The NVIDIA Vulkan ICD (libGLX_nvidia) needs glvnd's dispatch libraries and a Vulkan loader.
if [ -d .gl ]; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
mkdir -p /tmp/wgt && tar -C /tmp/wgt -xJf .devcarry/payload.tar.xz
export LD_LIBRARY_PATH=/tmp/wgt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export WGT_DAWN_PATH=/tmp/wgt/lib/libwebgpu_wrapper.so
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
if [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
fi
export PATH=/tmp/wgt/bin:$PATH
# Debian's engine, when packed: select it with WGT_DAWN="$DAWN_DEBIAN_LIB" (a path: the
# programs re-start under the runtime beside it, as WGT_DAWN=debian does on the build machine).
if [ -f /tmp/wgt/dawn-debian/wgt-engine.txt ]; then
  DAWN_DEBIAN_LIB=$(ls /tmp/wgt/dawn-debian/usr/lib/*/libwebgpu_dawn.so.0 | head -1)
  export DAWN_DEBIAN_LIB
fi
