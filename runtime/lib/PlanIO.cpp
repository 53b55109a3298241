//===- PlanIO.cpp - Plan JSON form and validation -------------------------===//
//
// The on-disk form of a plan goes through nlohmann/json: parsing, numbers
// and escaping are the library's; this file only maps fields. Reading is
// strict: unknown keys, wrong types and out-of-range values are errors that
// name the JSON path, so a plan written by a newer producer or edited by
// hand never runs half-understood. Enum fields accept exactly their names
// (an empty string is no name), integers must fit int64 and the field's
// range, arrays whose length sizes a table are held to the plan bounds
// (Plan.h) before their elements are read, and nesting deeper than
// kMaxPlanJsonDepth is refused before the text reaches the parser.
//
//===----------------------------------------------------------------------===//

#include "tandem/runtime/MemoryPlanner.h"
#include "tandem/runtime/Plan.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <limits>
#include <set>
#include <sstream>

using nlohmann::json;

namespace tandem {
namespace runtime {

namespace {

const char *roleName(Buffer::Role role) {
  switch (role) {
  case Buffer::Role::Input:
    return "input";
  case Buffer::Role::Temp:
    return "temp";
  case Buffer::Role::View:
    return "view";
  }
  return "?";
}

const char *normName(NormKind kind) {
  return kind == NormKind::Layer ? "layer" : "rms";
}

/// A collective's transport: "sms" (NCCL's kernels, the default) or
/// "copy_engine" (Step::copyEngine).
enum class Transport { Sms, CopyEngine };

const char *transportName(Transport transport) {
  return transport == Transport::CopyEngine ? "copy_engine" : "sms";
}

const char *reduceName(ReduceKind kind) {
  switch (kind) {
  case ReduceKind::Sum:
    return "sum";
  case ReduceKind::Avg:
    return "avg";
  case ReduceKind::Max:
    return "max";
  case ReduceKind::Min:
    return "min";
  }
  return "?";
}

json stepToJson(const Step &step) {
  json j;
  j["kind"] = stepKindName(step.kind);
  j["op"] = step.name;
  if (!step.location.empty())
    j["loc"] = step.location;
  if (!step.label.empty())
    j["label"] = step.label;
  j["stream"] = step.stream;
  if (!step.waitEvents.empty())
    j["wait_events"] = step.waitEvents;
  if (step.recordEvent >= 0)
    j["record_event"] = step.recordEvent;
  j["inputs"] = step.inputs;
  j["outputs"] = step.outputs;
  switch (step.kind) {
  case StepKind::Matmul:
    j["role"] = step.role;
    j["transpose_lhs"] = step.transA;
    j["transpose_rhs"] = step.transB;
    j["sm_target"] = step.smTarget;
    break;
  case StepKind::Attention:
  case StepKind::AttentionGrad:
    j["heads"] = step.heads;
    j["kv_heads"] = step.kvHeads;
    j["head_dim"] = step.headDim;
    j["causal"] = step.causal;
    j["sm_target"] = step.smTarget;
    break;
  case StepKind::Norm:
  case StepKind::NormGrad:
    j["norm"] = normName(step.norm);
    break;
  case StepKind::Elementwise:
    j["elementwise"] = elementwiseKindName(step.elementwise);
    break;
  case StepKind::Opaque:
    j["declared_bytes"] = step.declaredBytes;
    j["declared_flops"] = step.declaredFlops;
    break;
  case StepKind::Slice:
    j["dim"] = step.dim;
    j["chunk"] = step.chunk;
    j["chunks"] = step.chunks;
    j["interleave"] = step.interleave;
    // Only uneven slices have weights, so that equal ones read and write
    // as before.
    if (!step.weights.empty())
      j["weights"] = step.weights;
    break;
  case StepKind::Concat:
    j["dim"] = step.dim;
    j["interleave"] = step.interleave;
    break;
  case StepKind::RingConcat:
    j["dim"] = step.dim;
    j["group"] = step.group;
    break;
  case StepKind::Collective:
    j["collective"] = collectiveKindName(step.collective);
    j["reduce"] = reduceName(step.reduce);
    j["group"] = step.group;
    j["dim"] = step.dim;
    j["shift"] = step.shift;
    j["comm_sms"] = step.commSms;
    break;
  case StepKind::Sync:
    break;
  }
  // Written only where it differs from the default, so that plans without
  // copy-engine steps (or query rows) read and write as before.
  if (step.copyEngine)
    j["transport"] = transportName(Transport::CopyEngine);
  if (step.queries != 0)
    j["queries"] = step.queries;
  if (step.predictedStartUs >= 0) {
    j["predicted"] = {{"start_us", step.predictedStartUs},
                      {"duration_us", step.predictedDurationUs}};
    if (step.predictedAloneUs >= 0)
      j["predicted"]["alone_us"] = step.predictedAloneUs;
  }
  return j;
}

/// Strict field reader: every access records the key, so unknown keys can
/// be reported, and every error carries the JSON path.
class Reader {
public:
  Reader(const json &object, std::string path, std::string &error)
      : object(object), path(std::move(path)), error(error) {
    if (!object.is_object())
      fail("", "must be an object");
  }

  bool failed() const { return !error.empty(); }

  void fail(const std::string &key, const std::string &message) {
    if (error.empty())
      error = (key.empty() ? path : path + "." + key) + ": " + message;
  }

  const json *get(const std::string &key, bool required) {
    seen.insert(key);
    if (!object.is_object())
      return nullptr;
    auto it = object.find(key);
    if (it == object.end()) {
      if (required)
        fail(key, "missing");
      return nullptr;
    }
    return &*it;
  }

  /// Whether `v` is an integer that fits int64 (nlohmann keeps integers
  /// above INT64_MAX as uint64, which get<int64_t>() would wrap).
  static bool isInt64(const json &v) {
    return v.is_number_integer() &&
           !(v.is_number_unsigned() &&
             v.get<uint64_t>() >
                 static_cast<uint64_t>(std::numeric_limits<int64_t>::max()));
  }

  template <typename T>
  void integer(const std::string &key, T &out, bool required, int64_t min,
               int64_t max = INT64_MAX) {
    // A narrower destination narrows the range instead of wrapping.
    max = std::min<int64_t>(max, std::numeric_limits<T>::max());
    min = std::max<int64_t>(min, std::numeric_limits<T>::min());
    const json *v = get(key, required);
    if (!v)
      return;
    if (!isInt64(*v)) {
      fail(key, v->is_number_integer() ? "must fit a 64-bit signed integer"
                                       : "must be an integer");
      return;
    }
    int64_t value = v->get<int64_t>();
    if (value < min || value > max) {
      fail(key,
           "must be in [" + std::to_string(min) + ", " +
               (max == INT64_MAX ? std::string("inf") : std::to_string(max)) +
               "], got " + std::to_string(value));
      return;
    }
    out = static_cast<T>(value);
  }

  void number(const std::string &key, double &out, bool required) {
    const json *v = get(key, required);
    if (!v)
      return;
    if (!v->is_number()) {
      fail(key, "must be a number");
      return;
    }
    out = v->get<double>();
  }

  void boolean(const std::string &key, bool &out, bool required) {
    const json *v = get(key, required);
    if (!v)
      return;
    if (!v->is_boolean()) {
      fail(key, "must be true or false");
      return;
    }
    out = v->get<bool>();
  }

  void string(const std::string &key, std::string &out, bool required) {
    const json *v = get(key, required);
    if (!v)
      return;
    if (!v->is_string()) {
      fail(key, "must be a string");
      return;
    }
    out = v->get<std::string>();
  }

  void integers(const std::string &key, std::vector<int64_t> &out,
                bool required, int64_t min, int64_t max = INT64_MAX) {
    const json *v = get(key, required);
    if (!v)
      return;
    if (!v->is_array()) {
      fail(key, "must be an array of integers");
      return;
    }
    out.clear();
    for (size_t i = 0; i < v->size(); ++i) {
      const json &e = (*v)[i];
      if (!isInt64(e) || e.get<int64_t>() < min || e.get<int64_t>() > max) {
        fail(key + "[" + std::to_string(i) + "]",
             "must be an integer in [" + std::to_string(min) + ", " +
                 (max == INT64_MAX ? std::string("inf") : std::to_string(max)) +
                 "]");
        return;
      }
      out.push_back(e.get<int64_t>());
    }
  }

  /// Reports the first key that no accessor asked for.
  void finish() {
    if (failed() || !object.is_object())
      return;
    for (auto it = object.begin(); it != object.end(); ++it)
      if (!seen.count(it.key())) {
        fail(it.key(), "unknown field");
        return;
      }
  }

private:
  const json &object;
  std::string path;
  std::string &error;
  std::set<std::string> seen;
};

/// Reads an enum by its exact name. A present field must name a value: an
/// empty or unknown string is an error listing the names, never the default.
template <typename Enum, typename NameFn>
bool enumField(Reader &r, const std::string &key, Enum &out, Enum last,
               NameFn name, bool required) {
  const json *v = r.get(key, required);
  if (r.failed() || !v)
    return !r.failed();
  if (!v->is_string()) {
    r.fail(key, "must be a string");
    return false;
  }
  const std::string &text = v->get_ref<const std::string &>();
  std::string names;
  for (int i = 0; i <= static_cast<int>(last); ++i) {
    if (text == name(static_cast<Enum>(i))) {
      out = static_cast<Enum>(i);
      return true;
    }
    names += std::string(i ? ", " : "") + name(static_cast<Enum>(i));
  }
  r.fail(key, "unknown value '" + text + "' (expected one of " + names + ")");
  return false;
}

/// Array `key` when it is an array of at most `bound` elements (and, with
/// `nonEmpty`, not empty); otherwise fails naming the bound, nullptr.
const json *boundedArray(Reader &r, const std::string &key, int64_t bound,
                         const char *boundName, bool nonEmpty = false) {
  const json *v = r.get(key, true);
  if (!v)
    return nullptr;
  if (!v->is_array() || (nonEmpty && v->empty())) {
    r.fail(key, nonEmpty ? "must be a non-empty array" : "must be an array");
    return nullptr;
  }
  if (static_cast<int64_t>(v->size()) > bound) {
    r.fail(key, "has " + std::to_string(v->size()) + " elements, more than " +
                    boundName + " = " + std::to_string(bound));
    return nullptr;
  }
  return v;
}

} // namespace

/// Runs before the parser, so that no input reaches it (or the code walking
/// its result) nested deeper than the plan bound.
std::size_t jsonNestingExceeds(const std::string &text, int limit) {
  int depth = 0;
  bool inString = false, escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"')
      inString = true;
    else if (c == '[' || c == '{') {
      if (++depth > limit)
        return i;
    } else if ((c == ']' || c == '}') && depth > 0)
      --depth;
  }
  return std::string::npos;
}

namespace {

bool readStep(const json &j, const std::string &path, Step &step,
              std::string &error) {
  Reader r(j, path, error);
  enumField(r, "kind", step.kind, StepKind::Sync, stepKindName, true);
  r.string("op", step.name, true);
  r.string("loc", step.location, false);
  r.string("label", step.label, false);
  r.integer("stream", step.stream, true, 0, kMaxPlanStreams - 1);
  r.integers("wait_events", step.waitEvents, false, 0, kMaxPlanEvents - 1);
  r.integer("record_event", step.recordEvent, false, 0, kMaxPlanEvents - 1);
  r.integers("inputs", step.inputs, true, 0);
  r.integers("outputs", step.outputs, true, 0);
  if (r.failed())
    return false;
  switch (step.kind) {
  case StepKind::Matmul:
    r.string("role", step.role, true);
    r.boolean("transpose_lhs", step.transA, true);
    r.boolean("transpose_rhs", step.transB, true);
    r.integer("sm_target", step.smTarget, false, 0);
    break;
  case StepKind::Attention:
  case StepKind::AttentionGrad:
    r.integer("heads", step.heads, true, 1);
    r.integer("kv_heads", step.kvHeads, true, 1);
    r.integer("head_dim", step.headDim, true, 1);
    r.boolean("causal", step.causal, true);
    r.integer("sm_target", step.smTarget, false, 0);
    break;
  case StepKind::Norm:
  case StepKind::NormGrad:
    enumField(r, "norm", step.norm, NormKind::Rms, normName, true);
    break;
  case StepKind::Elementwise:
    enumField(r, "elementwise", step.elementwise, ElementwiseKind::SwigluGrad,
              elementwiseKindName, true);
    break;
  case StepKind::Opaque:
    r.integer("declared_bytes", step.declaredBytes, true, 0, kMaxDeclaredBytes);
    r.number("declared_flops", step.declaredFlops, false);
    break;
  case StepKind::Slice:
    r.integer("dim", step.dim, true, 0);
    r.integer("chunk", step.chunk, true, 0);
    r.integer("chunks", step.chunks, true, 1);
    r.integer("interleave", step.interleave, true, 1);
    // Optional: absent (or empty) = `chunks` equal blocks; validatePlan
    // checks the count against `chunks` and the sum against the dimension.
    r.integers("weights", step.weights, false, 1);
    break;
  case StepKind::Concat:
    r.integer("dim", step.dim, true, 0);
    r.integer("interleave", step.interleave, true, 1);
    break;
  case StepKind::RingConcat:
    r.integer("dim", step.dim, true, 0);
    r.integer("group", step.group, true, 0);
    break;
  case StepKind::Collective:
    enumField(r, "collective", step.collective, CollectiveKind::Permute,
              collectiveKindName, true);
    enumField(r, "reduce", step.reduce, ReduceKind::Min, reduceName, false);
    r.integer("group", step.group, true, 0);
    r.integer("dim", step.dim, false, 0);
    r.integer("shift", step.shift, false, INT64_MIN);
    r.integer("comm_sms", step.commSms, false, 0);
    break;
  case StepKind::Sync:
    break;
  }
  // Read for every kind, so that a copy-engine transport on a step that
  // cannot take one is refused by validatePlan naming the step's kind,
  // not as an unknown field.
  Transport transport = Transport::Sms;
  enumField(r, "transport", transport, Transport::CopyEngine, transportName,
            false);
  step.copyEngine = transport == Transport::CopyEngine;
  // Optional, 0 when absent; read for every kind like `transport`, so that
  // validatePlan refuses it outside attention steps naming the kind.
  r.integer("queries", step.queries, false, 0);
  if (const json *p = r.get("predicted", false)) {
    Reader pr(*p, path + ".predicted", error);
    pr.number("start_us", step.predictedStartUs, true);
    pr.number("duration_us", step.predictedDurationUs, true);
    pr.number("alone_us", step.predictedAloneUs, false);
    pr.finish();
  }
  r.finish();
  return !r.failed();
}

bool readBuffer(const json &j, const std::string &path, Buffer &buffer,
                std::string &error) {
  Reader r(j, path, error);
  r.string("name", buffer.name, false);
  std::string type;
  r.string("dtype", type, true);
  if (!r.failed()) {
    if (auto t = parseDType(type))
      buffer.type = *t;
    else
      r.fail("dtype",
             "unknown element type '" + type + "' (expected bf16, f16 or f32)");
  }
  r.integers("shape", buffer.shape, true, 1);
  enumField(
      r, "role", buffer.role, Buffer::Role::View,
      [](Buffer::Role role) { return roleName(role); }, true);
  r.integer("view_of", buffer.viewOf, buffer.role == Buffer::Role::View, 0);
  r.integer("view_offset", buffer.viewOffset, false, 0);
  r.integer("arena_offset", buffer.arenaOffset, false, 0);
  r.number("init_scale", buffer.initScale, false);
  if (!r.failed() && !(buffer.initScale > 0))
    r.fail("init_scale", "must be a number > 0");
  r.finish();
  return !r.failed();
}

} // namespace

std::string writePlanJson(const Plan &plan) {
  json j;
  j["format"] = "tandem-plan";
  j["format_version"] = plan.formatVersion;
  j["function"] = plan.function;
  j["producer"] = plan.producer;
  j["schedule"] = plan.schedule;
  json streams = json::array();
  for (int64_t s = 0; s < plan.numStreams; ++s) {
    json stream;
    stream["name"] = s < static_cast<int64_t>(plan.streamNames.size())
                         ? plan.streamNames[s]
                         : "stream " + std::to_string(s);
    stream["priority"] = s < static_cast<int64_t>(plan.streamPriorities.size())
                             ? plan.streamPriorities[s]
                             : 0;
    streams.push_back(stream);
  }
  j["streams"] = streams;
  j["num_events"] = plan.numEvents;
  json groups = json::array();
  for (const Group &g : plan.groups)
    groups.push_back(
        {{"name", g.name}, {"size", g.size}, {"topology", g.topology}});
  j["groups"] = groups;
  json buffers = json::array();
  for (const Buffer &b : plan.buffers) {
    json jb;
    jb["name"] = b.name;
    jb["dtype"] = dtypeName(b.type);
    jb["shape"] = b.shape;
    jb["role"] = roleName(b.role);
    if (b.role == Buffer::Role::View) {
      jb["view_of"] = b.viewOf;
      jb["view_offset"] = b.viewOffset;
    }
    if (b.role == Buffer::Role::Temp && b.arenaOffset >= 0)
      jb["arena_offset"] = b.arenaOffset;
    if (b.role == Buffer::Role::Input && b.initScale != 1.0)
      jb["init_scale"] = b.initScale;
    buffers.push_back(jb);
  }
  j["buffers"] = buffers;
  j["inputs"] = plan.inputs;
  j["outputs"] = plan.outputs;
  j["arena_bytes"] = plan.arenaBytes;
  json steps = json::array();
  for (const Step &s : plan.steps)
    steps.push_back(stepToJson(s));
  j["steps"] = steps;
  if (plan.prediction) {
    const Prediction &p = *plan.prediction;
    j["prediction"] = {{"target", p.target},
                       {"span_us", p.spanUs},
                       {"compute_us", p.computeUs},
                       {"comm_us", p.commUs},
                       {"exposed_comm_us", p.exposedCommUs},
                       {"bound_us", p.boundUs}};
  }
  return j.dump(1) + "\n";
}

std::optional<Plan> parsePlan(const std::string &text,
                              const std::string &origin, std::string &error) {
  if (size_t at = jsonNestingExceeds(text, kMaxPlanJsonDepth);
      at != std::string::npos) {
    error = origin + ": JSON nested deeper than kMaxPlanJsonDepth = " +
            std::to_string(kMaxPlanJsonDepth) + " levels at byte " +
            std::to_string(at);
    return std::nullopt;
  }
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception &e) {
    // The library's message gives the byte position.
    error = origin + ": not valid JSON: " + e.what();
    return std::nullopt;
  }
  std::string fieldError;
  Plan plan;
  Reader r(j, origin, fieldError);
  std::string format;
  r.string("format", format, true);
  if (!r.failed() && format != "tandem-plan")
    r.fail("format", "must be \"tandem-plan\", got \"" + format + "\"");
  r.integer("format_version", plan.formatVersion, true, 0);
  if (!r.failed() && plan.formatVersion != kPlanFormatVersion)
    r.fail("format_version",
           "version " + std::to_string(plan.formatVersion) +
               " is not supported (this runtime reads version " +
               std::to_string(kPlanFormatVersion) + ")");
  r.string("function", plan.function, true);
  r.string("producer", plan.producer, false);
  if (const json *s = r.get("schedule", false)) {
    if (!s->is_array())
      r.fail("schedule", "must be an array of strings");
    else
      for (const json &e : *s) {
        if (!e.is_string()) {
          r.fail("schedule", "must be an array of strings");
          break;
        }
        plan.schedule.push_back(e.get<std::string>());
      }
  }
  if (const json *s = boundedArray(r, "streams", kMaxPlanStreams,
                                   "kMaxPlanStreams", true)) {
    for (size_t i = 0; i < s->size() && !r.failed(); ++i) {
      Reader sr((*s)[i], origin + ".streams[" + std::to_string(i) + "]",
                fieldError);
      std::string name;
      int64_t priority = 0;
      sr.string("name", name, true);
      sr.integer("priority", priority, true, INT32_MIN, INT32_MAX);
      sr.finish();
      plan.streamNames.push_back(name);
      plan.streamPriorities.push_back(priority);
    }
    plan.numStreams = plan.streamNames.size();
  }
  r.integer("num_events", plan.numEvents, true, 0, kMaxPlanEvents);
  if (const json *g =
          boundedArray(r, "groups", kMaxPlanGroups, "kMaxPlanGroups")) {
    for (size_t i = 0; i < g->size() && !r.failed(); ++i) {
      Reader gr((*g)[i], origin + ".groups[" + std::to_string(i) + "]",
                fieldError);
      Group group;
      gr.string("name", group.name, true);
      gr.integer("size", group.size, true, 1, kMaxGroupSize);
      gr.string("topology", group.topology, false);
      gr.finish();
      plan.groups.push_back(group);
    }
  }
  if (const json *b =
          boundedArray(r, "buffers", kMaxPlanBuffers, "kMaxPlanBuffers")) {
    for (size_t i = 0; i < b->size() && !r.failed(); ++i) {
      Buffer buffer;
      readBuffer((*b)[i], origin + ".buffers[" + std::to_string(i) + "]",
                 buffer, fieldError);
      plan.buffers.push_back(buffer);
    }
  }
  r.integers("inputs", plan.inputs, true, 0);
  r.integers("outputs", plan.outputs, true, 0);
  r.integer("arena_bytes", plan.arenaBytes, true, 0);
  if (const json *s =
          boundedArray(r, "steps", kMaxPlanSteps, "kMaxPlanSteps")) {
    for (size_t i = 0; i < s->size() && !r.failed(); ++i) {
      Step step;
      readStep((*s)[i], origin + ".steps[" + std::to_string(i) + "]", step,
               fieldError);
      plan.steps.push_back(step);
    }
  }
  if (const json *p = r.get("prediction", false)) {
    Reader pr(*p, origin + ".prediction", fieldError);
    Prediction prediction;
    pr.string("target", prediction.target, false);
    pr.number("span_us", prediction.spanUs, true);
    pr.number("compute_us", prediction.computeUs, true);
    pr.number("comm_us", prediction.commUs, true);
    pr.number("exposed_comm_us", prediction.exposedCommUs, true);
    pr.number("bound_us", prediction.boundUs, true);
    pr.finish();
    plan.prediction = prediction;
  }
  r.finish();
  if (!fieldError.empty()) {
    error = fieldError;
    return std::nullopt;
  }
  std::string invalid = validatePlan(plan);
  if (!invalid.empty()) {
    error = origin + ": " + invalid;
    return std::nullopt;
  }
  return plan;
}

std::optional<Plan> readPlanFile(const std::string &path, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open plan file '" + path + "'";
    return std::nullopt;
  }
  std::stringstream text;
  text << in.rdbuf();
  return parsePlan(text.str(), path, error);
}

bool writePlanFile(const Plan &plan, const std::string &path,
                   std::string &error) {
  std::ofstream out(path, std::ios::binary);
  if (!out) {
    error = "cannot write plan file '" + path + "'";
    return false;
  }
  out << writePlanJson(plan);
  if (!out) {
    error = "error while writing plan file '" + path + "'";
    return false;
  }
  return true;
}

} // namespace runtime
} // namespace tandem
