// Block-quantized weights (wgt/quant.hpp): QTensor and the quantized ops.
#include "common.hpp"

namespace wgtpy {

void init_quant(py::module_& m) {
  using wgt::QTensor;
  auto qt = [](const std::string& s) { return wgt::qtype_from_name(s); };
  py::class_<QTensor>(m, "QTensor",
                      "Block-quantized 2-D weights [rows, cols] compatible with GGUF/ggml (q8_0, q4_0, q4_1, q5_0,\n"
                      "q5_1, q4_k, q5_k, q6_k): rows stored as consecutive blocks; cols a multiple of the block size. Not a dense\n"
                      "dtype: an element has no size of its own, so a QTensor cannot be viewed or strided.")
      .def_static("from_bytes", [qt](const std::string& type, int64_t rows, int64_t cols, py::buffer data) {
            py::buffer_info b = data.request();
            py::ssize_t expect = b.itemsize;
            for (py::ssize_t i = b.ndim - 1; i >= 0; --i) {
              if (b.shape[i] > 1 && b.strides[i] != expect)
                wgt::throw_error(wgt::ErrorKind::InvalidArgument, "QTensor.from_bytes", "the buffer is not C-contiguous");
              expect *= b.shape[i];
            }
            const size_t n = static_cast<size_t>(b.size * b.itemsize);
            return QTensor::from_bytes(qt(type), rows, cols, b.ptr, n);
          }, py::arg("qtype"), py::arg("rows"), py::arg("cols"), py::arg("data"),
          "Copies the packed bytes (GGUF layout, rows back to back; bytes, bytearray, a NumPy u8 array, ...).\n"
          "ShapeMismatch when cols is not a multiple of the block size, Format when the byte count is not\n"
          "exactly rows * row_bytes.")
      .def_static("from_tensor", [qt](const std::string& type, int64_t rows, int64_t cols, const wgt::Tensor& bytes) {
            return QTensor::from_tensor(qt(type), rows, cols, bytes);
          }, py::arg("qtype"), py::arg("rows"), py::arg("cols"), py::arg("bytes"),
          "Wraps an existing contiguous u8 tensor of exactly the right size (no copy).")
      .def_property_readonly("qtype", [](const QTensor& q) { return std::string(wgt::qtype_name(q.qtype())); })
      .def_property_readonly("rows", &QTensor::rows)
      .def_property_readonly("cols", &QTensor::cols)
      .def_property_readonly("shape", [](const QTensor& q) { return py::make_tuple(q.rows(), q.cols()); })
      .def_property_readonly("row_bytes", &QTensor::row_bytes)
      .def_property_readonly("nbytes", &QTensor::nbytes)
      .def_property_readonly("device", [](const QTensor& q) { return q.device().str(); })
      .def_property_readonly("bytes", &QTensor::bytes, "The packed bytes, a u8 tensor [nbytes].")
      .def("to", [](const QTensor& q, py::object d) { Device dev = to_device(d); py::gil_scoped_release g; return q.to(dev); },
           py::arg("device"), "Explicit transfer of the packed bytes.")
      .def("cpu", [](const QTensor& q) { return q.to(Device::cpu()); }, release_gil())
      .def("__repr__", &QTensor::str);

  m.def("qtype_info", [qt](const std::string& type) {
          const wgt::QTypeInfo& i = wgt::qtype_info(qt(type));
          py::dict d;
          d["name"] = i.name;
          d["ggml_type_id"] = i.ggml_type_id;
          d["block_elems"] = i.block_elems;
          d["block_bytes"] = i.block_bytes;
          return d;
        }, py::arg("qtype"), "Static facts of a format: elements and bytes per block, GGUF type id.");
  m.def("quantize", [qt](const wgt::Tensor& w, const std::string& type) {
          auto t = qt(type);
          py::gil_scoped_release g;
          return wgt::quantize(w, t);
        }, py::arg("w"), py::arg("qtype"),
        "Quantizes a 2-D floating tensor [rows, cols] row by row (round to nearest; the K-quants search\n"
        "per-sub-block scales/mins by least squares). Non-finite inputs are rejected.");
  m.def("dequantize", &wgt::dequantize, py::arg("w"), release_gil(), "f32 [rows, cols].");
  m.def("qmatmul_t", &wgt::qmatmul_t, py::arg("x"), py::arg("w"), release_gil(),
        "y = x W^T with W [N, K] quantized and x f32 [..., K] -> f32 [..., N]; W is decoded one block at a time.");
  m.def("rms_norm_qmatmul_t", &wgt::rms_norm_qmatmul_t, py::arg("x"), py::arg("weight"), py::arg("w"), py::arg("eps") = 1e-6,
        release_gil(), "qmatmul_t(rms_norm(x, weight, eps), w), fused on WebGPU for f32 x.");
  m.def("addqmm_t", &wgt::addqmm_t, py::arg("c"), py::arg("x"), py::arg("w"), release_gil(),
        "c + qmatmul_t(x, w), c f32 with the product's shape (a residual).");
  m.def("silu_mul_qmatmul_t", &wgt::silu_mul_qmatmul_t, py::arg("gate"), py::arg("up"), py::arg("w"), py::arg("c") = py::none(),
        release_gil(), "[c +] qmatmul_t(silu_mul(gate, up), w) (a SwiGLU down projection with its residual c).");
  m.def("get_rows", &wgt::get_rows, py::arg("table"), py::arg("ids"), release_gil(),
        "Embedding lookup: ids (i32/i64, any shape) -> f32 [ids.shape..., cols].");
}

}  // namespace wgtpy
