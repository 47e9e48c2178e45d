// The core's internal API for the bindings shipped with the library: the Python module
// paddle_prof._core (python/bindings.cc) and the torch bridge (python/torch_*.cc). They
// reach the core through the public headers (include/paddle_prof/) and, for what those
// do not offer, through this header alone. Nothing here is for users, so none of it is
// public; it is re-exported from the internal headers that define it, and it is all that
// the bindings may use of them:
//  - NativeGuard (native_guard.h): record_stacks' caches are the profiler's memory, and
//    the torch CPU allocator wrapper keeps c10's own allocation off the place "native",
//    its blocks being charged to "CPU" already;
//  - CounterMemory (counter_memory.h): the CUDA allocator's statistics, charged as blocks
//    where no per-block tracker attaches;
//  - StopProfiler(ReportOptions), EnableImplicitProfiler, ImplicitProfilerRunning
//    (profiler_control.h): a stop with every report option given, and the launcher's
//    whole-program profile (python3 -m paddle_prof run);
//  - SetFollowChildren, FollowedWindowNow, StartChildProfile, ChildProfileRunning,
//    SetChildRole, FinishChildProfile, FinishChildProfileOnTermination
//    (profiler_control.h): child processes
//    (paddle_prof/children.py), which multiprocessing may start as fresh programs or end
//    with os._exit;
//  - FLAGS_paddle_prof_row_limit, FLAGS_paddle_prof_record_stacks (flags.h): the rows a
//    printed table shows by default, and whether windows record stacks;
//  - SetCaptureDir (profiler_control.h) and RecoverCapture (capture_reader.h): the
//    Python profiler's capture_dir, and paddle_prof.recover();
//  - ProfilerStateNames (enum_names.h), SortingKeyNames (sort_keys.h): the names the package offers,
//    from the core's own tables;
//  - OnOutOfMemory (out_of_memory.h): the torch allocators' failures;
//  - PlaceIndex (place_registry.h), TrackAlloc and TrackFree (memory_tracker.h): the
//    torch CPU allocator wrapper's blocks, which c10's allocator hands out fresh, so
//    they skip RecordAlloc's lookup of an address still live;
//  - AdoptBlock (memory_tracker.h): the CPU tensors that c10 allocated before the
//    wrapper, known from `import paddle_prof.torch` on;
//  - MarkBlock (memory_tracker.h), the kinds of block_kind.h and SetMemoryCategories
//    (profiler_control.h): the memory categories of paddle_prof.torch, which finds
//    parameters, gradients and optimizer state by their storage, and of
//    paddle_prof.paddle, which finds them by their data pointer;
//  - SetDistributedInfo (profiler_control.h): the rank and clock offset the Python
//    profiler finds in torch.distributed as a window opens;
//  - LoadSummary (summary_reader.h): paddle_prof.load(), and the summaries a merge reads;
//  - ReportMerger (report_merge.h): paddle_prof.merge() of Reports;
//  - MergeSummaryFiles (merge_files.h): paddle_prof.merge() of paths and
//    `python3 -m paddle_prof merge`;
//  - ResumeNativeTracking (native_tracking.h): a followed forked child under run --native;
//  - SignalNamed (caught_signals.h): run's supervisor passes the snapshot signal on;
//  - StartInProcessNative, StopInProcessNative (in_process_native.h): profiler(native=True);
//  - PatchImportSlots (import_slots.h): the Paddle bridge's hooks on the calls Paddle makes
//    to its own profiler's entry points; ScopeTickNow, BackdateOpenScopes
//    (scope_backdate.h): its grad nodes' events, opened once the layer events around
//    them are;
//  - HtmlReport, HtmlPage (html_report.h): Report.to_html(), `python3 -m paddle_prof html`
//    and the merge CLI's page, and the page of a summary text (tests draw edited ones);
//  - RegisterStackCapture, RecordStacks, RecordingStacks, InternCallStack, CallStack
//    (call_stacks.h): record_stacks, whose frames only the Python module can read;
//  - ThisProcess (process_identity.h): the rank a listening process reports before its
//    job's distributed module is initialised, read from the environment as its windows
//    read it;
//  - DiffReports (report_diff.h), DiffJson, DiffTable, DiffPage (diff_outputs.h):
//    paddle_prof.diff() and `paddle-prof diff`, its text and its page;
//  - FormatBytes (number_format.h): sizes in the package's text as in the table's;
//  - kSummarySuffix (profile_files.h), kGpuPidBase (chrome_trace.h): where a summary is
//    beside its trace, and where a merged trace's fresh pids start;
//  - NoteOpInputs, NoteOpSequence (op_details.h): an op's inputs' dims and types, and
//    torch's sequence number of each op autograd records, which the trace writes as
//    `Input Dims` and as an arrow from a forward op to its backward node.
#ifndef PADDLE_PROF_SRC_BINDINGS_API_H_
#define PADDLE_PROF_SRC_BINDINGS_API_H_

#include "block_kind.h"
#include "call_stacks.h"
#include "capture_reader.h"
#include "caught_signals.h"
#include "chrome_trace.h"
#include "counter_memory.h"
#include "diff_outputs.h"
#include "enum_names.h"
#include "flags.h"
#include "html_report.h"
#include "import_slots.h"
#include "in_process_native.h"
#include "memory_tracker.h"
#include "merge_files.h"
#include "native_guard.h"
#include "native_tracking.h"
#include "number_format.h"
#include "op_details.h"
#include "out_of_memory.h"
#include "place_registry.h"
#include "process_identity.h"
#include "profile_files.h"
#include "profiler_control.h"
#include "report_diff.h"
#include "report_merge.h"
#include "scope_backdate.h"
#include "sort_keys.h"
#include "summary_reader.h"

#endif  // PADDLE_PROF_SRC_BINDINGS_API_H_
