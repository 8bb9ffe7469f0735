#!/usr/bin/env bash
# Source this on the GPU machine: unpacks .devcarry/payload.tar.xz to /tmp/wgt and sets the
# environment (Vulkan loader from .gl/ debs if the machine has none, NVIDIA ICD, Dawn path).
if [ -d .gl ] && ! ldconfig -p | grep -q libvulkan.so.1; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
mkdir -p /tmp/wgt && tar -C /tmp/wgt -xJf .devcarry/payload.tar.xz
export LD_LIBRARY_PATH=/tmp/wgt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export WGT_DAWN_PATH=/tmp/wgt/lib/libwebgpu_wrapper.so
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
if [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
export PATH=/tmp/wgt/bin:$PATH
