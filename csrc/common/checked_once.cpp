// The record behind checked_once.h: a few hundred (array, version, fact) entries, replaced oldest
// first: room for a sampler window's blocks (two facts each) beside the graphs in use. A graph's
// structures are re-remembered after per-batch structures have pushed them out: one more check,
// not one per call.
#include "common/checked_once.h"

#include <pthread.h>

#include <array>
#include <cstring>
#include <mutex>
#include <optional>

namespace fastgl {
namespace {

enum class Fact : uint8_t { kValidOffsets, kIdRange };

using WeakStorage = c10::weak_intrusive_ptr<c10::StorageImpl>;

// The memory a fact is about: a contiguous run of one dtype in one storage.
struct Array {
  const c10::StorageImpl* storage;
  int64_t offset, numel;
  c10::ScalarType dtype;

  static Array of(const TensorRun& run) {
    const at::Tensor& t = run.tensor;
    return {t.storage().unsafeGetStorageImpl(), t.storage_offset() + run.begin, run.length,
            t.scalar_type()};
  }
  bool operator==(const Array& other) const {
    return storage == other.storage && offset == other.offset && numel == other.numel &&
           dtype == other.dtype;
  }
};

// Whether two tensors share one version counter. c10::VariableVersion is a single pointer to the
// counter and offers no accessor to it: its bytes are compared. A record holds a copy of the
// counter (a strong reference), so no other counter can take its address while it is compared.
static_assert(sizeof(c10::VariableVersion) == sizeof(void*),
              "c10::VariableVersion is expected to hold only the pointer to its counter");
bool same_counter(const c10::VariableVersion& a, const c10::VariableVersion& b) {
  return std::memcmp(&a, &b, sizeof(c10::VariableVersion)) == 0;
}

struct Record {
  std::optional<WeakStorage> storage;  // empty until the slot is first used
  Array array{};
  c10::VariableVersion counter;
  uint32_t version = 0;
  Fact fact = Fact::kValidOffsets;
  int64_t value = 0;  // the edge count of valid offsets; the largest id of an id range
};

class CheckedOnce {
 public:
  // The value recorded for `fact` about `t` at its current version, if any.
  bool find(const at::Tensor& t, Fact fact, int64_t* value) {
    if (!trackable(t)) return false;
    const c10::VariableVersion& counter = t.unsafeGetTensorImpl()->version_counter();
    const uint32_t version = counter.current_version();
    const Array array = Array::of(t);
    std::lock_guard<std::mutex> lock(mutex_);
    for (const Record& record : records_) {
      if (record.fact == fact && record.version == version && refers_to(record, array) &&
          same_counter(record.counter, counter)) {
        *value = record.value;
        return true;
      }
    }
    return false;
  }

  void remember(const TensorRun& run, Fact fact, int64_t value) {
    const at::Tensor& t = run.tensor;
    if (!trackable(t)) return;
    const c10::VariableVersion& counter = t.unsafeGetTensorImpl()->version_counter();
    const Array array = Array::of(run);
    std::lock_guard<std::mutex> lock(mutex_);
    Record* slot = &records_[next_];
    for (Record& record : records_) {  // a newer fact about the same array replaces the older
      if (record.fact == fact && refers_to(record, array)) {
        slot = &record;
        break;
      }
    }
    if (slot == &records_[next_]) next_ = (next_ + 1) % records_.size();
    *slot = Record{t.storage().getWeakStorageImpl(), array, counter,
                   counter.current_version(),        fact,  value};
  }

  // fork() copies only the forking thread: the child must not inherit the mutex held by another.
  void lock_for_fork() { mutex_.lock(); }
  void unlock_after_fork() { mutex_.unlock(); }

 private:
  // Contiguous CUDA tensors with a version counter (inference tensors have none): see
  // checked_once.h.
  static bool trackable(const at::Tensor& t) {
    return t.defined() && t.is_cuda() && !t.is_inference() && t.has_storage() && t.is_contiguous();
  }

  // The weak reference keeps a dead array's StorageImpl allocated, so no live tensor can have
  // its address: comparing addresses suffices, without taking a strong reference (whose release
  // could run a destructor under the mutex). The array's counter the record holds outright: a
  // counter is a bare integer, whose release runs nothing else.
  static bool refers_to(const Record& record, const Array& array) {
    return record.storage && record.array == array;
  }

  std::mutex mutex_;
  std::array<Record, 256> records_;
  size_t next_ = 0;
};

CheckedOnce& checked_once() {
  static CheckedOnce* instance = [] {
    auto* created = new CheckedOnce();  // never destroyed: tensors may die after exit begins
    pthread_atfork([] { checked_once().lock_for_fork(); },
                   [] { checked_once().unlock_after_fork(); },
                   [] { checked_once().unlock_after_fork(); });
    return created;
  }();
  return *instance;
}

}  // namespace

bool offsets_known_valid(const at::Tensor& offsets, int64_t num_edges) {
  int64_t edges = 0;
  return checked_once().find(offsets, Fact::kValidOffsets, &edges) && edges == num_edges;
}

void remember_valid_offsets(const TensorRun& offsets, int64_t num_edges) {
  checked_once().remember(offsets, Fact::kValidOffsets, num_edges);
}

std::optional<int64_t> known_max_id(const at::Tensor& ids) {
  int64_t max_id = 0;
  if (!checked_once().find(ids, Fact::kIdRange, &max_id)) return std::nullopt;
  return max_id;
}

void remember_id_range(const TensorRun& ids, int64_t max_id) {
  checked_once().remember(ids, Fact::kIdRange, max_id);
}

void note_in_place_write(const at::Tensor& t) {
  if (!t.is_inference()) t.unsafeGetTensorImpl()->bump_version();
}

}  // namespace fastgl
