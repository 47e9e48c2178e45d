#include "advice.h"

#include <algorithm>
#include <map>

#include "number_format.h"
#include "row_label.h"
#include "step_phases.h"

namespace paddle_prof::internal {

namespace {

constexpr size_t kVaryingShapes = 8;                  // tags of one growing op
constexpr int64_t kRetainedGrowth = int64_t{16} << 20;  // resident growth
constexpr double kDataShare = 0.30;                   // of step time
constexpr double kActivationShare = 0.50;             // of a place's peak
constexpr double kSmallOpMs = 0.020;                  // a row's median call
constexpr double kSmallOpsShare = 0.50;               // of self time
constexpr double kSmallOpsLeastMs = 1.0;              // less is not worth fusing
constexpr size_t kNamed = 3;                          // modules or rows an advice names

std::string Percent(double part, double whole) {
  return FormatFixed(whole > 0 ? 100.0 * part / whole : 0, 0) + "%";
}

// The framework whose tools a remedy names: PyTorch's report has ATen ops or torch's
// modules; PaddlePaddle's the events paddle_prof.paddle records (its layers, backward
// passes, DataLoader, static runs). Each remedy names a framework's tool only where it
// was tried on that framework and helped (tests/python/test_advice.py, test_paddle.py).
enum class Framework { kTorch, kPaddle, kOther };

Framework FrameworkOf(const Report& r) {
  bool paddle = false;
  for (const EventRow& row : r.events) {
    if (row.name.rfind("aten::", 0) == 0 || row.name.rfind("nn.Module: ", 0) == 0) {
      return Framework::kTorch;
    }
    paddle = paddle || row.name.rfind("nn.Layer: ", 0) == 0 || row.name.rfind("paddle.", 0) == 0;
  }
  return paddle ? Framework::kPaddle : Framework::kOther;
}

bool IsOneDnn(const GrowingHolder& h) {
  const auto onednn = [](const std::string& name) {
    return name.find("mkldnn") != std::string::npos || name.find("onednn") != std::string::npos;
  };
  return onednn(h.name) || std::any_of(h.path.begin(), h.path.end(), onednn);
}

Advice VaryingShapes(const MemoryGrowth& live, const GrowingHolder& h) {
  Advice a;
  a.kind = "varying_shapes";
  a.bytes = h.bytes;
  a.message = h.name + " holds " + FormatBytes(h.bytes) + " of live memory that grew over " +
              std::to_string(live.steps) + " steps, in blocks allocated under " +
              std::to_string(h.tags) + " different input shapes (most under " + h.largest_tag +
              ") and never freed: a cache that keeps something for every new shape.";
  a.fix = "Bin or pad the inputs to a few sizes, so that few shapes reach the op.";
  if (IsOneDnn(h)) {
    a.fix += " For oneDNN (mkldnn) ops, also cap its caches: run with LRU_CACHE_CAPACITY=1 "
             "ONEDNN_PRIMITIVE_CACHE_CAPACITY=0 (both: either alone still grows, and "
             "LRU_CACHE_CAPACITY=0 crashes torch).";
  }
  return a;
}

Advice MallocRetention(const ProcessGrowth& p) {
  Advice a;
  a.kind = "malloc_retention";
  a.bytes = p.kept_bytes;
  a.message = "the process's resident memory grew by " + FormatBytes(p.resident_bytes) + " over " +
              std::to_string(p.steps) + " steps, " + FormatBytes(p.kept_bytes) + " (" +
              Percent(static_cast<double>(p.kept_bytes), static_cast<double>(p.resident_bytes)) +
              ") of it memory the program freed and malloc kept; the heap in use grew by " +
              FormatBytes(p.in_use_bytes) + ".";
  a.fix = "Let malloc give freed memory back: run with MALLOC_MMAP_THRESHOLD_=65536 (blocks "
          "of 64 KiB and more get mappings of their own, returned when freed) and "
          "MALLOC_TRIM_THRESHOLD_=0 (the free top of the heap is returned), or preload "
          "jemalloc (LD_PRELOAD=libjemalloc.so.2).";
  return a;
}

std::optional<Advice> DataBound(const Report& r) {
  if (r.steps.empty() || !HasPhases(r)) return std::nullopt;
  double step_ms = 0;
  for (const StepSummary& step : r.steps) step_ms += step.wall_ms;
  const double data_ms = r.phases_ms.data;
  if (data_ms <= 0 || data_ms < kDataShare * step_ms) return std::nullopt;
  Advice a;
  a.kind = "data_bound";
  a.ms = data_ms;
  a.message = "the steps wait for their data: the data phase (the DataLoader's __next__) takes " +
              Percent(data_ms, step_ms) + " of step time, " + FormatFixed(data_ms, 1) + " ms of " +
              FormatFixed(step_ms, 1) + " ms over " + std::to_string(r.steps.size()) + " steps.";
  // Paddle's DataLoader has the same three (its workers hand batches over in shared
  // memory already), and no pin_memory.
  a.fix = FrameworkOf(r) == Framework::kPaddle
              ? "Load batches ahead of the steps: paddle.io.DataLoader(num_workers=N) with "
                "worker processes, prefetch_factor for how many batches each loads ahead, "
                "persistent_workers=True to keep them between epochs."
              : "Load batches ahead of the steps: DataLoader(num_workers=N) with worker "
                "processes, prefetch_factor for how many batches each loads ahead, "
                "persistent_workers=True to keep them between epochs, and pin_memory=True "
                "when batches go to a GPU.";
  return a;
}

bool Within(const std::string& path, const std::string& outer) {
  return path.size() > outer.size() && path.compare(0, outer.size(), outer) == 0 &&
         path[outer.size()] == '.';
}

// The modules with the most activation bytes on `place`, none inside another named one.
std::vector<std::string> ActivationModules(const Report& r, const PlaceSummary& place) {
  std::vector<std::pair<int64_t, const ModuleSummary*>> held;
  for (const ModuleSummary& m : r.modules) {
    const auto it = m.memory.find(place.place);
    if (m.depth > 0 && it != m.memory.end() && it->second.activation_bytes > 0) {
      held.emplace_back(it->second.activation_bytes, &m);
    }
  }
  std::stable_sort(held.begin(), held.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> named;
  std::vector<std::string> paths;
  for (const auto& [bytes, m] : held) {
    if (named.size() == kNamed) break;
    const bool nested = std::any_of(paths.begin(), paths.end(), [m = m](const std::string& p) {
      return Within(m->path, p) || Within(p, m->path);
    });
    if (nested) continue;
    paths.push_back(m->path);
    named.push_back(m->path + " (" + FormatBytes(bytes) + ")");
  }
  if (named.empty()) {  // modules=False: those whose activations were live at the peak
    for (const auto& m : place.activations_at_peak) {
      if (named.size() == kNamed) break;
      named.push_back(m.module + " (" + FormatBytes(m.bytes) + " at the peak)");
    }
  }
  return named;
}

void ActivationBound(const Report& r, std::vector<Advice>* out) {
  for (const PlaceSummary& p : r.places) {
    const auto it = p.categories_at_peak.find("activation");
    if (it == p.categories_at_peak.end() || p.peak_bytes <= 0 ||
        static_cast<double>(it->second) < kActivationShare * static_cast<double>(p.peak_bytes)) {
      continue;
    }
    Advice a;
    a.kind = "activation_bound";
    a.bytes = it->second;
    a.message = "activations are " + FormatBytes(it->second) + " (" +
                Percent(static_cast<double>(it->second), static_cast<double>(p.peak_bytes)) +
                ") of the peak on " + PlaceLabel(p) + ", " + FormatBytes(p.peak_bytes) + ".";
    const std::vector<std::string> modules = ActivationModules(r, p);
    const Framework framework = FrameworkOf(r);
    a.fix = "Recompute activations in the backward pass instead of keeping them: activation "
            "checkpointing";
    if (framework == Framework::kTorch) a.fix += " (torch.utils.checkpoint.checkpoint)";
    if (framework == Framework::kPaddle) a.fix += " (paddle.distributed.fleet.utils.recompute)";
    const char* around = framework == Framework::kPaddle ? " around the layers that keep the most: "
                                                         : " around the modules that keep the most: ";
    for (size_t i = 0; i < modules.size(); ++i) {
      a.fix += (i == 0 ? around : ", ") + modules[i];
    }
    a.fix += "; or a smaller batch.";
    out->push_back(std::move(a));
  }
}

std::optional<Advice> SmallOps(const Report& r) {
  double self_ms = 0, small_ms = 0;
  size_t small_rows = 0;
  std::vector<const EventRow*> small;
  for (const EventRow& row : r.events) {
    if (row.calls == 0) continue;
    self_ms += row.self_ms;
    if (row.p50_ms > 0 && row.p50_ms < kSmallOpMs) {
      small_ms += row.self_ms;
      ++small_rows;
      small.push_back(&row);
    }
  }
  if (small_ms < kSmallOpsLeastMs || small_ms < kSmallOpsShare * self_ms) return std::nullopt;
  std::stable_sort(small.begin(), small.end(),
                   [](const EventRow* a, const EventRow* b) { return a->self_ms > b->self_ms; });
  Advice a;
  a.kind = "small_ops";
  a.ms = small_ms;
  a.message = Percent(small_ms, self_ms) + " of self time, " + FormatFixed(small_ms, 1) +
              " ms, is in " + std::to_string(small_rows) +
              " rows whose median call takes under 20 µs, most in ";
  for (size_t i = 0; i < small.size() && i < kNamed; ++i) {
    a.message += (i == 0 ? "" : ", ") + RowLabel(*small[i]) + " (" +
                 FormatFixed(small[i]->self_ms, 1) + " ms, median " +
                 FormatFixed(small[i]->p50_ms * 1000, 1) + " µs)";
  }
  a.message += ": the time goes to calling ops, not to their work.";
  // No Paddle tool: paddle.jit.to_static ran a function of 100 small ops no faster than
  // eager on 3.3.1's CPU wheel (285-296 µs a call against 295), and with
  // full_graph=True slower (382-448).
  a.fix = FrameworkOf(r) == Framework::kTorch
              ? "Give each call more work: fuse the ops (torch.compile on torch 2.x, or "
                "torch.jit.script), and use larger batches."
              : "Give each call more work: larger batches, fewer and larger ops.";
  return a;
}

}  // namespace

std::vector<Advice> GrowthAdvice(const MemoryGrowth& live, const ProcessGrowth& process) {
  std::vector<Advice> advice;
  for (const GrowingHolder& h : live.holders) {
    if (h.tags >= kVaryingShapes) advice.push_back(VaryingShapes(live, h));
  }
  if (process.resident_bytes >= kRetainedGrowth && 2 * process.kept_bytes >= process.resident_bytes) {
    advice.push_back(MallocRetention(process));
  }
  return advice;
}

std::vector<Advice> FigureAdvice(const Report& report) {
  std::vector<Advice> advice;
  if (std::optional<Advice> a = DataBound(report)) advice.push_back(std::move(*a));
  ActivationBound(report, &advice);
  if (std::optional<Advice> a = SmallOps(report)) advice.push_back(std::move(*a));
  return advice;
}

Advice StragglerAdvice(const StragglerEvidence& e) {
  Advice a;
  a.kind = "straggler";
  a.ms = e.behind_ms;
  a.message = e.input + " is behind the others";
  if (e.steps > 0) {
    a.message += " in " + std::to_string(e.steps) + " of " + std::to_string(e.of_steps) + " steps";
  }
  if (e.ops > 0) {
    a.message += std::string(e.steps > 0 ? " and" : "") + " in " + std::to_string(e.ops) +
                 (e.ops == 1 ? " op" : " ops");
  }
  a.message += ", by " + FormatFixed(e.behind_ms, 1) + " ms in all; worst: " + e.worst + ".";
  a.fix = "Look at " + e.input +
          " first: its trace beside a fast one's, and what differs there: more data or work "
          "(uneven shards, work only it does: logging, checkpoints, evaluation), a slower or "
          "busier host or device, or a slower link.";
  return a;
}

}  // namespace paddle_prof::internal
