#include "torch_memory_marks.h"

#include <torch/csrc/autograd/python_variable.h>

#include <atomic>
#include <cstdint>
#include <utility>
#include <vector>

#include "bindings_api.h"
#include "torch_cpu_allocator.h"
#include "torch_version_gates.h"

namespace paddle_prof::torch_bridge {
namespace {

// torch.Tensor's C base: every tensor, a Parameter or a subclass too, is one.
PyTypeObject* g_tensor_type = nullptr;

// Counts the windows whose kinds were forgotten (categorize_memory): what a TensorMarks
// told before is told again in a later window.
std::atomic<uint64_t> g_windows{0};

bool IsTensor(pybind11::handle item) {
  return g_tensor_type != nullptr && PyObject_TypeCheck(item.ptr(), g_tensor_type);
}

// Its storage's block: a view's too, which starts inside it.
bool MarkStorage(const c10::Storage& storage, uint8_t kind) {
  return storage && internal::MarkBlock(storage.data(), kind);
}

bool MarkStorage(const at::Tensor& tensor, uint8_t kind) {
  return tensor.defined() && tensor.has_storage() && MarkStorage(tensor.storage(), kind);
}

// The storage's block, if c10's own CPU allocator made it, not the wrapper: before the
// wrapper, or after it through c10::GetDefaultCPUAllocator(), which torch.UntypedStorage
// (and so a tensor's deepcopy) calls. False if not.
bool AdoptStorage(const c10::Storage& storage) {
  if (!storage || storage.device().type() != c10::DeviceType::CPU) return false;
  c10::StorageImpl& impl = *storage.unsafeGetStorageImpl();
  return AdoptCpuBlock(PADDLE_PROF_STORAGE_DATA_PTR(impl), impl.nbytes());
}

bool AdoptStorage(const at::Tensor& tensor) {
  return tensor.defined() && tensor.has_storage() && AdoptStorage(tensor.storage());
}

}  // namespace

bool MarkTensorBlock(const at::Tensor& tensor, uint8_t kind) {
  return MarkStorage(tensor, kind) || (AdoptStorage(tensor) && MarkStorage(tensor, kind));
}

namespace {

using WeakStorage = c10::weak_intrusive_ptr<c10::StorageImpl>;

// The tensors of one list (a model's parameters, an optimizer's state), each with the
// storage it was last told as, and its gradient's. A told storage is held weakly, so
// its memory is not given to another storage while the list keeps it: a tensor that
// still has that storage has the same block, unless its data were swapped in place
// (resize_, set_data_ptr), which only a list made again sees. A scan then reads each
// tensor's storage pointer and tells only what changed, a gradient made again, say:
// on a model of 10,000 parameters, what it saves is a cache-missing lookup in the
// live-block table per tensor.
class TensorMarks {
 public:
  TensorMarks(const pybind11::list& tensors, int kind, int grad_kind)
      : kind_(static_cast<uint8_t>(kind)), grad_kind_(static_cast<uint8_t>(grad_kind)) {
    for (pybind11::handle item : tensors) {
      if (!IsTensor(item)) continue;
      const at::Tensor& tensor = THPVariable_Unpack(item.ptr());
      if (tensor.defined()) entries_.push_back(Entry{tensor.getIntrusivePtr()});
    }
  }

  // Tells each tensor's block (and its gradient's) that was not told yet in this window.
  // A tensor no one else holds any more (an optimizer's state loaded anew) is let go of,
  // so that the list never keeps memory alive; returns how many were.
  int64_t Mark() {
    const uint64_t window = g_windows.load(std::memory_order_relaxed);
    if (window != window_) {
      for (Entry& e : entries_) e.told = e.grad_told = WeakStorage(kNone);
      window_ = window;
    }
    int64_t let_go = 0;
    for (Entry& e : entries_) {
      if (!e.tensor) continue;
      if (e.tensor.use_count() == 1) {
        e = Entry(c10::intrusive_ptr<c10::TensorImpl>());
        ++let_go;
        continue;
      }
      Tell(e.tensor->unsafe_storage(), kind_, &e.told);
      if (grad_kind_ == 0) continue;
      const at::Tensor& grad = e.tensor->grad();
      if (grad.defined()) Tell(grad.unsafeGetTensorImpl()->unsafe_storage(), grad_kind_, &e.grad_told);
    }
    return let_go;
  }

  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    explicit Entry(c10::intrusive_ptr<c10::TensorImpl> t) : tensor(std::move(t)) {}
    c10::intrusive_ptr<c10::TensorImpl> tensor;
    WeakStorage told{kNone};
    WeakStorage grad_told{kNone};
  };
  static inline const c10::intrusive_ptr<c10::StorageImpl> kNone{};

  // Tells `storage` as `kind` unless it was told as `told` already; a block c10's own
  // allocator made is adopted first (live from now on). A storage with no block to track
  // (one from numpy, say) is remembered all the same: it never gets one.
  static void Tell(const c10::Storage& storage, uint8_t kind, WeakStorage* told) {
    if (!storage || storage.unsafeGetStorageImpl() == told->_unsafe_get_target()) return;
    *told = storage.getWeakStorageImpl();
    if (!MarkStorage(storage, kind) && AdoptStorage(storage)) MarkStorage(storage, kind);
  }

  std::vector<Entry> entries_;
  uint8_t kind_;
  uint8_t grad_kind_;
  uint64_t window_ = ~uint64_t{0};
};

}  // namespace

void AddMemoryMarkFunctions(pybind11::module_& module) {
  module.def(
      "set_tensor_type", [](pybind11::type type) {
        g_tensor_type = reinterpret_cast<PyTypeObject*>(type.release().ptr());  // kept for good
      },
      pybind11::arg("type"));
  module.def(
      "categorize_memory",
      [](bool on) {
        if (on) g_windows.fetch_add(1, std::memory_order_relaxed);
        internal::SetMemoryCategories(on);
      },
      pybind11::arg("on"),
      "Turns the memory categories on for the window (forgetting what earlier windows "
      "were told) or off.");
  module.def(
      "mark_tensors",
      [](const pybind11::list& tensors, int kind) {
        int64_t missing = 0;
        for (pybind11::handle item : tensors) {
          if (IsTensor(item)) {
            missing += !MarkStorage(THPVariable_Unpack(item.ptr()), static_cast<uint8_t>(kind));
          }
        }
        return missing;
      },
      pybind11::arg("tensors"), pybind11::arg("kind"),
      "Marks the storage of each tensor of the list as `kind` (block_kind.h); returns how "
      "many had no tracked block.");
  pybind11::class_<TensorMarks>(
      module, "TensorMarks",
      "The tensors of a list, whose blocks mark() tells as `kind` (block_kind.h) and their "
      "gradients' as `grad_kind` (0: none), each once a window unless its storage changed.")
      .def(pybind11::init<const pybind11::list&, int, int>(), pybind11::arg("tensors"),
           pybind11::arg("kind"), pybind11::arg("grad_kind") = 0)
      .def("mark", &TensorMarks::Mark,
           "Tells what changed since the last mark(); returns how many tensors it let go of, "
           "no one else holding them.")
      .def("__len__", &TensorMarks::size);
  module.def("take_untracked_handed_out", &TakeUntrackedHandedOut,
             "Whether c10 handed out a CPU block outside a window since the last call (True "
             "on the first): only then can adopt_tensors find anything.");
  module.def("note_untracked_handed_out", &NoteUntrackedHandedOut,
             "Has the next take_untracked_handed_out() say True: a walk that failed is owed.");
  module.def(
      "adopt_tensors",
      [](const pybind11::list& objects) {
        int64_t adopted = 0;
        for (pybind11::handle item : objects) {
          if (!IsTensor(item)) continue;
          const at::Tensor& tensor = THPVariable_Unpack(item.ptr());
          adopted += AdoptStorage(tensor);
          // Only a leaf keeps a gradient (another's grad() warns that it has none).
          if (tensor.defined() && tensor.is_leaf()) adopted += AdoptStorage(tensor.grad());
        }
        return adopted;
      },
      pybind11::arg("objects"),
      "Has the tracker know the CPU blocks of the tensors among `objects` (and of their "
      "gradients) that c10 allocated before the allocator wrapper; returns how many.");
}

}  // namespace paddle_prof::torch_bridge
