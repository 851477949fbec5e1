// loco._loco: the C API (loco/loco.h) for Python, one call for each, nothing more; the package's
// __init__.py gives it its Python face. Arrays come in through the buffer protocol, unconverted:
// a buffer that is not fp32 (or bf16 seen as 16-bit integers), C-contiguous and writable is
// refused, never copied (loco writes the new θ into it). The GIL is released while a call blocks
// (join, round), so other Python threads run meanwhile.

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "loco/loco.h"

namespace py = pybind11;

namespace {

// Raises the package's loco.Error(status name, message) (__init__.py).
[[noreturn]] void raise(loco_status status, const char* message) {
  const py::object error = py::module_::import("loco").attr("Error");
  PyErr_SetObject(error.ptr(), py::make_tuple(loco_status_name(status), message).ptr());
  throw py::error_already_set();
}

void check(loco_status status, const loco_peer* peer) {
  if (status != LOCO_OK)
    raise(status, peer != nullptr ? loco_peer_last_error(peer) : loco_last_error());
}

std::string hex(const std::uint8_t* bytes, std::size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < size; ++i) {
    out += kDigits[bytes[i] >> 4];
    out += kDigits[bytes[i] & 15];
  }
  return out;
}

// A peer handle; closed by close() or when collected.
class Peer {
 public:
  explicit Peer(const std::string& config) {
    check(loco_peer_open(config.c_str(), &peer_), nullptr);
  }
  ~Peer() { close(); }
  Peer(const Peer&) = delete;
  Peer& operator=(const Peer&) = delete;

  void close() {
    py::gil_scoped_release unlocked;  // leaving waits for the network thread
    loco_peer_close(peer_);
    peer_ = nullptr;
  }

  // [(name, shape), ...] of the run's model, in its order.
  py::list tensors() const {
    std::size_t count = 0;
    check(loco_peer_tensor_count(open(), &count), peer_);
    py::list out;
    for (std::size_t i = 0; i < count; ++i) {
      const char* name = nullptr;
      const std::size_t* shape = nullptr;
      std::size_t rank = 0;
      check(loco_peer_tensor_info(peer_, i, &name, &shape, &rank), peer_);
      py::tuple dims(rank);
      for (std::size_t d = 0; d < rank; ++d) dims[d] = shape[d];
      out.append(py::make_tuple(name, dims));
    }
    return out;
  }

  std::uint64_t inner_steps() const {
    std::uint64_t steps = 0;
    check(loco_peer_inner_steps(open(), &steps), peer_);
    return steps;
  }

  std::string strategy() const {
    const char* kind = nullptr;
    check(loco_peer_strategy(open(), &kind), peer_);
    return kind;
  }

  // Binds a writable, C-contiguous fp32 buffer; the caller keeps the object alive.
  void bind(const std::string& name, const py::buffer& array) {
    const py::buffer_info info = array.request(/*writable=*/true);
    if (info.format != py::format_descriptor<float>::format() || info.itemsize != 4)
      raise(LOCO_ERR_INVALID_ARGUMENT,
            ("tensor " + name + ": loco takes fp32 arrays, not format '" + info.format + "'")
                .c_str());
    const std::vector<std::size_t> shape = contiguous_shape(name, info);
    check(loco_peer_bind(open(), name.c_str(), shape.data(), shape.size(),
                         static_cast<float*>(info.ptr)),
          peer_);
  }

  // Binds a writable, C-contiguous buffer of bf16 values seen as 16-bit integers (a
  // torch.bfloat16 tensor's .view(torch.int16), which NumPy can hold).
  void bind_bf16(const std::string& name, const py::buffer& array) {
    const py::buffer_info info = array.request(/*writable=*/true);
    if (info.itemsize != 2 || (info.format != "h" && info.format != "H"))
      raise(LOCO_ERR_INVALID_ARGUMENT,
            ("tensor " + name + ": bf16 values come as 16-bit integers, not format '" +
             info.format + "'")
                .c_str());
    const std::vector<std::size_t> shape = contiguous_shape(name, info);
    check(loco_peer_bind_bf16(open(), name.c_str(), shape.data(), shape.size(),
                              static_cast<std::uint16_t*>(info.ptr)),
          peer_);
  }

  py::dict join(double timeout_s) {
    loco_join_info info{};
    loco_status status;
    {
      py::gil_scoped_release unlocked;
      status = loco_peer_join(open(), timeout_s, &info);
    }
    check(status, peer_);
    py::dict out;
    out["fetched"] = info.fetched != 0;
    out["round"] = info.round;
    out["shard_index"] = info.shard_index;
    out["shard_count"] = info.shard_count;
    out["step"] = info.step;
    return out;
  }

  py::list data_files(double timeout_s) {
    std::size_t count = 0;
    loco_status status;
    {
      py::gil_scoped_release unlocked;
      status = loco_peer_data_files(open(), timeout_s, &count);
    }
    check(status, peer_);
    py::list out;
    for (std::size_t k = 0; k < count; ++k) out.append(loco_peer_data_path(open(), k));
    return out;
  }

  py::dict data_shard() {
    loco_data_shard shard{};
    check(loco_peer_data_shard(open(), &shard), peer_);
    py::dict out;
    out["index"] = shard.index;
    out["count"] = shard.count;
    out["changes"] = shard.changes;
    return out;
  }

  py::dict round(float loss) {
    loco_round_result result{};
    loco_status status;
    {
      py::gil_scoped_release unlocked;
      status = loco_peer_round(open(), loss, &result);
    }
    check(status, peer_);
    return result_dict(result);
  }

  void overlap() { check(loco_peer_overlap(open()), peer_); }

  bool round_start(float loss) {
    int started = 0;
    loco_status status;
    {
      py::gil_scoped_release unlocked;
      status = loco_peer_round_start(open(), loss, &started);
    }
    check(status, peer_);
    return started != 0;
  }

  bool round_ready() const {
    int ready = 0;
    check(loco_peer_round_ready(open(), &ready), peer_);
    return ready != 0;
  }

  // Streaming DiLoCo's fragment rounds (loco.h, loco_peer_fragment_*).
  py::tuple streaming() const {
    loco_streaming_info info{};
    check(loco_peer_streaming(open(), &info), peer_);
    return py::make_tuple(info.fragments, info.inner_steps, info.tau, info.alpha, info.eager != 0);
  }

  py::list fragment_tensors(std::size_t fragment) const {
    std::size_t count = 0;
    check(loco_peer_fragment_tensor_count(open(), fragment, &count), peer_);
    py::list names;
    for (std::size_t i = 0; i < count; ++i) {
      const char* name = nullptr;
      check(loco_peer_fragment_tensor(peer_, fragment, i, &name), peer_);
      names.append(name);
    }
    return names;
  }

  std::size_t fragment_of(const std::string& name) const {
    std::size_t fragment = 0;
    check(loco_peer_fragment_of(open(), name.c_str(), &fragment), peer_);
    return fragment;
  }

  std::size_t fragment_next() const {
    std::size_t fragment = 0;
    check(loco_peer_fragment_next(open(), &fragment), peer_);
    return fragment;
  }

  int fragment_due(std::uint64_t step) const {
    loco_due due = LOCO_DUE_NOTHING;
    check(loco_peer_fragment_due(open(), step, &due), peer_);
    return static_cast<int>(due);
  }

  std::size_t fragment_start(std::uint64_t step, float loss) {
    std::size_t fragment = 0;
    loco_status status;
    {
      py::gil_scoped_release unlocked;
      status = loco_peer_fragment_start(open(), step, loss, &fragment);
    }
    check(status, peer_);
    return fragment;
  }

  bool fragment_ready() const {
    int ready = 0;
    check(loco_peer_fragment_ready(open(), &ready), peer_);
    return ready != 0;
  }

  py::dict fragment_land(bool wait) {
    loco_round_result result{};
    loco_status status;
    {
      py::gil_scoped_release unlocked;
      status = loco_peer_fragment_land(open(), wait ? 1 : 0, &result);
    }
    check(status, peer_);
    return result_dict(result);
  }

  py::dict round_land() {
    loco_round_result result{};
    loco_status status;
    {
      py::gil_scoped_release unlocked;
      status = loco_peer_round_land(open(), &result);
    }
    check(status, peer_);
    return result_dict(result);
  }

 private:
  static py::dict result_dict(const loco_round_result& result) {
    static constexpr const char* kKinds[] = {"committed", "skipped", "replaced"};
    py::dict out;
    out["kind"] = kKinds[result.kind];
    out["round"] = result.round;
    out["members"] = result.members;
    out["state_hash"] = hex(result.state_hash, LOCO_HASH_BYTES);
    const loco_round_times& t = result.times;
    py::dict times;
    times["gather_s"] = t.gather_s;
    times["delta_s"] = t.delta_s;
    times["exchange_s"] = t.exchange_s;
    times["hash_s"] = t.hash_s;
    times["outer_s"] = t.outer_s;
    times["write_back_s"] = t.write_back_s;
    out["times"] = times;
    out["bytes_sent"] = result.bytes_sent;
    out["bytes_received"] = result.bytes_received;
    out["step"] = result.step;
    return out;
  }

 public:
  py::tuple state_hash() const {
    std::uint8_t hash[LOCO_HASH_BYTES];
    std::uint64_t round = 0;
    check(loco_peer_state_hash(open(), hash, &round), peer_);
    return py::make_tuple(hex(hash, LOCO_HASH_BYTES), round);
  }

  void save(const std::string& path) { check(loco_peer_save(open(), path.c_str()), peer_); }
  void load(const std::string& path) { check(loco_peer_load(open(), path.c_str()), peer_); }

  void leave(const std::string& reason) {
    loco_status status;
    {
      py::gil_scoped_release unlocked;
      status = loco_peer_leave(open(), reason.c_str());
    }
    check(status, peer_);
  }

  void interrupt() {
    if (peer_ != nullptr) loco_peer_interrupt(peer_);
  }

 private:
  // The buffer's shape, when its elements lie back to back in C order.
  static std::vector<std::size_t> contiguous_shape(const std::string& name,
                                                   const py::buffer_info& info) {
    py::ssize_t expected = info.itemsize;
    for (py::ssize_t d = info.ndim; d-- > 0;) {
      const auto at = static_cast<std::size_t>(d);
      if (info.shape[at] != 1 && info.strides[at] != expected)
        raise(LOCO_ERR_INVALID_ARGUMENT,
              ("tensor " + name +
               ": loco takes C-contiguous arrays, and a contiguous copy (np.ascontiguousarray) "
               "would not be the model's memory: make the array itself contiguous before binding")
                  .c_str());
      expected *= info.shape[at];
    }
    std::vector<std::size_t> shape;
    for (const py::ssize_t size : info.shape) shape.push_back(static_cast<std::size_t>(size));
    return shape;
  }

  loco_peer* open() const {
    if (peer_ == nullptr) raise(LOCO_ERR_STATE, "this peer is closed");
    return peer_;
  }

  loco_peer* peer_ = nullptr;
};

}  // namespace

// loco_write_genesis over [(name, fp32 array or bf16 values as int16, is_bf16), ...]: arrays in C
// order (a copy is made of any other, as the file is one anyway). Returns (hash, config lines).
py::tuple write_genesis(const std::string& path, const py::list& tensors) {
  using F32 = py::array_t<float, py::array::c_style | py::array::forcecast>;
  using Bf16 = py::array_t<std::int16_t, py::array::c_style>;
  std::vector<py::array> arrays;  // alive until the file is written
  std::vector<std::string> names;
  std::vector<std::vector<std::size_t>> shapes;
  for (const py::handle item : tensors) {
    const auto entry = item.cast<py::tuple>();
    const bool bf16 = entry[2].cast<bool>();
    names.push_back(entry[0].cast<std::string>());
    arrays.push_back(bf16 ? py::array(Bf16::ensure(entry[1])) : py::array(F32::ensure(entry[1])));
    if (!arrays.back())
      raise(LOCO_ERR_INVALID_ARGUMENT, ("tensor " + names.back() + ": not an array").c_str());
    shapes.emplace_back(arrays.back().shape(), arrays.back().shape() + arrays.back().ndim());
  }
  std::vector<loco_tensor> model;
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    const bool bf16 = arrays[i].itemsize() == 2;
    model.push_back(loco_tensor{.name = names[i].c_str(),
                                .shape = shapes[i].data(),
                                .rank = shapes[i].size(),
                                .dtype = bf16 ? LOCO_DTYPE_BF16 : LOCO_DTYPE_F32,
                                .data = arrays[i].data()});
  }
  char hash[65];
  const char* lines = nullptr;
  check(loco_write_genesis(path.c_str(), model.data(), model.size(), hash, &lines), nullptr);
  return py::make_tuple(std::string(hash), std::string(lines));
}

PYBIND11_MODULE(_loco, m) {
  m.doc() = "loco's C API (loco/loco.h); use the package loco";
  m.def("version", &loco_version);
  m.def("keygen", [](const std::string& path) {
    char hex_key[65];
    check(loco_keygen(path.c_str(), hex_key), nullptr);
    return std::string(hex_key);
  });
  m.def("write_genesis", &write_genesis);
  py::class_<Peer>(m, "Peer")
      .def(py::init<const std::string&>())
      .def("close", &Peer::close)
      .def("tensors", &Peer::tensors)
      .def("inner_steps", &Peer::inner_steps)
      .def("strategy", &Peer::strategy)
      .def("bind", &Peer::bind)
      .def("bind_bf16", &Peer::bind_bf16)
      .def("join", &Peer::join)
      .def("data_files", &Peer::data_files)
      .def("data_shard", &Peer::data_shard)
      .def("round", &Peer::round)
      .def("overlap", &Peer::overlap)
      .def("round_start", &Peer::round_start)
      .def("round_ready", &Peer::round_ready)
      .def("round_land", &Peer::round_land)
      .def("streaming", &Peer::streaming)
      .def("fragment_tensors", &Peer::fragment_tensors)
      .def("fragment_of", &Peer::fragment_of)
      .def("fragment_next", &Peer::fragment_next)
      .def("fragment_due", &Peer::fragment_due)
      .def("fragment_start", &Peer::fragment_start)
      .def("fragment_ready", &Peer::fragment_ready)
      .def("fragment_land", &Peer::fragment_land)
      .def("state_hash", &Peer::state_hash)
      .def("save", &Peer::save)
      .def("load", &Peer::load)
      .def("leave", &Peer::leave)
      .def("interrupt", &Peer::interrupt);
}
