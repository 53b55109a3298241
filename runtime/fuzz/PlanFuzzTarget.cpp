//===- PlanFuzzTarget.cpp - What the plan fuzzer checks per input ---------===//

#include "PlanFuzzTarget.h"

#include "tandem/runtime/MemoryPlanner.h"
#include "tandem/runtime/PlanAccesses.h"

namespace tandem {
namespace runtime {

namespace {

using Wide = __int128;

std::string text(Wide v) {
  if (v < 0)
    return "-" + text(-v);
  std::string s;
  do {
    s.insert(s.begin(), char('0' + int(v % 10)));
    v /= 10;
  } while (v);
  return s;
}

} // namespace

std::string checkLaunchBounds(const Plan &plan, int64_t rank) {
  int64_t numBuffers = plan.buffers.size();
  std::vector<BufferAccess> accesses;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step &step = plan.steps[i];
    std::string error;
    if (!stepAccesses(plan, step, rank, accesses, error))
      return "step " + std::to_string(i) + ": " + error;
    for (const BufferAccess &a : accesses) {
      std::string where = "step " + std::to_string(i) + " buffer " +
                          std::to_string(a.buffer) + ": ";
      if (a.buffer < 0 || a.buffer >= numBuffers)
        return where + "no such buffer";
      // Where the buffer starts in its allocation, and that allocation.
      Wide start = 0;
      int64_t storage = a.buffer;
      const Buffer *b = &plan.buffers[storage];
      if (b->role == Buffer::Role::View) {
        start += b->viewOffset;
        storage = b->viewOf;
        if (storage < 0 || storage >= numBuffers)
          return where + "view of no buffer";
        b = &plan.buffers[storage];
        if (b->role == Buffer::Role::View)
          return where + "view of a view";
      }
      Wide allocation;
      if (b->role == Buffer::Role::Input) {
        allocation = b->bytes();
      } else {
        if (b->arenaOffset < 0)
          return where + "temporary " + std::to_string(storage) +
                 " has no arena offset";
        start += b->arenaOffset;
        allocation = plan.arenaBytes;
      }
      Wide first = start + Wide(a.offset);
      Wide end = first + Wide(a.rows > 0 ? a.rows - 1 : 0) * Wide(a.pitch) +
                 Wide(a.rowBytes);
      if (a.rows < 0 || a.rowBytes < 0 || a.pitch < 0 || first < 0 ||
          end > allocation || allocation < 0)
        return where + "bytes [" + text(first) + ", " + text(end) +
               ") of an allocation of " + text(allocation) + " bytes (" +
               (b->role == Buffer::Role::Input ? "input " : "arena, for ") +
               std::to_string(storage) + ")";
    }
  }
  return "";
}

std::string runPlanFuzzInput(const uint8_t *data, size_t size, bool *accepted) {
  std::string input(reinterpret_cast<const char *>(data), size), error;
  std::optional<Plan> plan = parsePlan(input, "fuzz", error);
  if (accepted)
    *accepted = plan.has_value();
  if (!plan)
    return error.empty() ? "a rejected plan without an error message" : "";
  if (std::string e = validatePlan(*plan); !e.empty())
    return "parsePlan accepted a plan validatePlan rejects: " + e;
  // As Executor::create does: plan memory unless the plan already has it.
  Plan planned = *plan;
  if (std::string e = planMemory(planned); !e.empty())
    return "planMemory failed on a valid plan: " + e;
  if (std::string e = validatePlan(planned); !e.empty())
    return "the memory planner made a valid plan invalid: " + e;
  if (std::string e = checkLaunchBounds(planned); !e.empty())
    return "a validated, planned access leaves its allocation: " + e;
  bool stated = false;
  for (const Buffer &b : plan->buffers)
    stated |= b.role == Buffer::Role::Temp && b.arenaOffset >= 0;
  if (stated)
    if (std::string e = checkLaunchBounds(*plan); !e.empty())
      return "a validated access leaves its allocation: " + e;
  std::string json = writePlanJson(planned);
  std::optional<Plan> back = parsePlan(json, "round trip", error);
  if (!back)
    return "the written form of a valid plan is rejected: " + error;
  if (writePlanJson(*back) != json)
    return "the written form of a valid plan does not read back the same";
  return "";
}

} // namespace runtime
} // namespace tandem
