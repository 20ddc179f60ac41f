// clperf's counting plugin for Oclgrind 21.10, loaded through OCLGRIND_PLUGINS.
//
// For one kernel launch it records, over the work-groups it lets run:
//  * per basic block of the kernel's module, how many times the work-items of those groups ran it
//    (counted at the block's terminator, which runs once per execution of the block);
//  * per completed group: its linear index, its work-items, the instructions they executed and their
//    global, constant and __local accesses;
//  * of the groups abandoned at the time limit: the same for the work-items they finished, and apart
//    the block counts of those they had started and not finished (inner loops' trips when not one
//    work-item finished: a group whose barriers keep every work-item waiting for the others);
//  * for the first few groups of the run order (the traced ones): each work-item's global, constant
//    and __local accesses in program order, as 32-byte records (struct Record), the first
//    cap / (traced groups x work-items) of them, and how many it made in all: every lane of a warp
//    traced alike (a prefix of each), however long one work-item runs;
//  * Oclgrind's error messages (invalid reads and writes, divergent barriers), counted.
//
// Sampling: Oclgrind builds the list of groups to run in KernelInvocation's constructor and reads
// it only after kernelBegin, so the plugin replaces the list there with a sample of it. The launch
// keeps its real NDRange: get_global_size() and get_num_groups() answer as in the whole launch.
// The sample's order is the middle group, the first, the last, then a stride near the golden ratio
// of the group count, coprime to it: every prefix of the order is spread over the grid, so the time
// budget may end the run after any group (and a run of one group has a typical one, not the end of
// a grid whose work grows along it).
//
// Time: no group starts that would end after CLPERF_COUNT_DEADLINE, judged by the mean time of the
// groups so far (the first group always starts), and a group still running at CLPERF_COUNT_ABORT
// (a kernel that loops forever) is abandoned. Both stop the Oclgrind worker thread the way Oclgrind
// stops on an internal error, by throwing its FatalError, which the worker catches; kernelEnd still
// runs and writes what was counted.
//
// Environment: CLPERF_COUNT_OUT (output prefix: PREFIX.json and PREFIX.trace), CLPERF_COUNT_SAMPLE
// (groups to run, 0 for all), CLPERF_COUNT_TRACE (how many of them record accesses),
// CLPERF_COUNT_TRACE_CAP (records kept at most), CLPERF_COUNT_DEADLINE and CLPERF_COUNT_ABORT
// (seconds since the Unix epoch).

#include <oclgrind/common.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <numeric>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/DebugInfoMetadata.h>
#include <llvm/IR/DebugLoc.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/Instruction.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>

#include <oclgrind/Context.h>
#include <oclgrind/Kernel.h>
#include <oclgrind/Memory.h>
#include <oclgrind/Plugin.h>
#include <oclgrind/WorkGroup.h>
#include <oclgrind/WorkItem.h>
// The list of groups to run is a private member. The header is the installed library's own, so
// its layout is the library's; only this one header is opened up.
#define private public
#include <oclgrind/KernelInvocation.h>
#undef private

namespace
{
constexpr uint32_t NONE = 0xffffffffu;
constexpr const char* STOP_MARK = "clperf-count: ";

// One access of a traced group, little-endian, as clperf.benchmark.counting.trace.TRACE_DTYPE reads it.
struct Record
{
  uint32_t group;  // linear group index: x + nx * (y + ny * z)
  uint32_t item;   // linear local id: x + lx * (y + ly * z); NONE for a work-group copy
  uint32_t site;   // memory instruction (PREFIX.json "sites"); NONE when unknown
  uint32_t seq;    // ordinal of this access among the work-item's accesses
  uint64_t offset; // bytes from the start of the buffer
  int16_t arg;     // kernel argument whose buffer holds the address, -1 for none
  uint16_t size;   // bytes
  uint8_t kind;    // 0 load, 1 store, 2 atomic
  uint8_t space;   // 1 global, 2 constant, 3 local
  uint16_t buffer; // Oclgrind's buffer number within the address space (tells __local arrays apart)
};
static_assert(sizeof(Record) == 32, "one trace record is 32 bytes");

double now()
{
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

double envDouble(const char* name, double fallback)
{
  const char* text = getenv(name);
  return text && *text ? std::strtod(text, nullptr) : fallback;
}

uint64_t envCount(const char* name, uint64_t fallback)
{
  const char* text = getenv(name);
  return text && *text ? std::strtoull(text, nullptr, 10) : fallback;
}

std::string quoted(const std::string& s)
{
  std::string out = "\"";
  char escape[8];
  for (unsigned char c : s)
  {
    if (c == '"' || c == '\\')
      out += {'\\', char(c)};
    else if (c < 0x20 && std::snprintf(escape, sizeof escape, "\\u%04x", c) > 0)
      out += escape;
    else
      out += char(c);
  }
  return out + "\"";
}

// The run order of ``total`` groups, its first ``sample`` (0: all): middle, first, last, then a
// golden-ratio stride coprime to ``total``, which visits every group once.
std::vector<size_t> spread(size_t total, size_t sample)
{
  size_t want = sample && sample < total ? sample : total;
  std::vector<size_t> order;
  order.reserve(want);
  if (total <= 2)
  {
    for (size_t g = 0; g < want; ++g)
      order.push_back(g);
    return order;
  }
  size_t stride = std::max<size_t>(1, size_t(double(total) * 0.6180339887498949 + 0.5));
  while (std::gcd(stride, total) != 1)
    ++stride;
  const size_t middle = total / 2;
  for (size_t g : {middle, size_t(0), total - 1})
    if (order.size() < want)
      order.push_back(g);
  for (size_t k = 1; order.size() < want; ++k)
  {
    size_t g = size_t((unsigned __int128)k * stride % total); // k * stride may pass 2^64
    if (g != total - 1 && g != middle)
      order.push_back(g);
  }
  return order;
}

// (line, column) in the kernel's own file: an instruction inlined from a header counts at the call
// in the kernel's file, one inlined from the same file at its own line, as clperf's analysis reads.
std::pair<unsigned, unsigned> sourcePosition(const llvm::Instruction& inst, llvm::StringRef mainFile)
{
  const llvm::DILocation* loc = inst.getDebugLoc().get();
  while (loc)
  {
    if (loc->getFilename() == mainFile || !loc->getInlinedAt())
      return loc->getFilename() == mainFile ? std::make_pair(loc->getLine(), loc->getColumn())
                                            : std::make_pair(0u, 0u);
    loc = loc->getInlinedAt();
  }
  return {0, 0};
}

class CountPlugin : public oclgrind::Plugin
{
public:
  explicit CountPlugin(const oclgrind::Context* context)
      : oclgrind::Plugin(context), m_out(getenv("CLPERF_COUNT_OUT") ? getenv("CLPERF_COUNT_OUT") : "count"),
        m_sample(envCount("CLPERF_COUNT_SAMPLE", 0)), m_traceGroups(envCount("CLPERF_COUNT_TRACE", 0)),
        m_cap(envCount("CLPERF_COUNT_TRACE_CAP", 2000000)),
        m_deadline(envDouble("CLPERF_COUNT_DEADLINE", 1e300)),
        m_abortAt(envDouble("CLPERF_COUNT_ABORT", 1e300))
  {
  }

  bool isThreadSafe() const override { return true; }

  void kernelBegin(const oclgrind::KernelInvocation* invocation) override
  {
    // the counting run's child launches one kernel once: the plugin's state is that launch's
    auto* ki = const_cast<oclgrind::KernelInvocation*>(invocation);
    oclgrind::Size3 n = ki->getNumGroups();
    m_numGroups = {n.x, n.y, n.z};
    m_localSize = ki->getLocalSize();
    size_t total = n.x * n.y * n.z;
    std::vector<size_t> order = spread(total, m_sample);
    std::vector<oclgrind::Size3> groups;
    for (size_t g : order)
      groups.emplace_back(g % n.x, (g / n.x) % n.y, g / (n.x * n.y));
    ki->m_workGroups = groups;
    m_planned = groups.size();
    for (size_t i = 0; i < order.size() && i < m_traceGroups; ++i)
      m_traced.insert(order[i]);
    const oclgrind::Kernel* kernel = ki->getKernel();
    m_kernel = kernel->getName();
    m_function = kernel->getFunction();
    indexModule();
    indexBuffers(kernel);
  }

  void workGroupBegin(const oclgrind::WorkGroup* wg) override
  {
    // a group that would end past the deadline, by the mean time of those so far, does not start
    double t = now();
    if (m_started++ > 0 && t + meanGroupSeconds() > m_deadline)
    {
      m_budgetSpent = true;
      throw oclgrind::FatalError(std::string(STOP_MARK) + "time budget spent", __FILE__, __LINE__);
    }
    Worker& w = worker();
    oclgrind::Size3 id = wg->getGroupID(), size = wg->getGroupSize();
    w.group = id.x + m_numGroups[0] * (id.y + m_numGroups[1] * id.z);
    w.items = size.x * size.y * size.z;
    w.groupSize = size;
    w.traced = m_traced.count(w.group) > 0;
    w.counts.assign(w.items * m_blocks.size(), 0);
    w.instructions.assign(w.items, 0);
    w.accesses.assign(w.items, 0);
    w.done.assign(w.items, 0);
    w.began = t;
    w.lastBlock = nullptr;
    w.lastItem = nullptr; // a work-item of the next group may get the same address
    w.records.clear();
    w.seq.assign(w.traced ? w.items : 0, 0);
    w.itemCap = m_cap / std::max<uint64_t>(1, m_traceGroups * w.items);
    w.localArg.clear();
    for (const auto& local : m_localValues)
      w.localArg[wg->getLocalMemory()->extractBuffer(wg->getLocalMemoryAddress(local.first))] = local.second;
  }

  void instructionExecuted(const oclgrind::WorkItem* wi, const llvm::Instruction* inst,
                           const oclgrind::TypedValue&) override
  {
    Worker& w = worker();
    if (wi != w.lastItem)
    {
      w.lastItem = wi;
      w.item = local(w, wi);
    }
    ++w.instructions[w.item];
    if ((++w.ticks & 0xffff) == 0 && now() > m_abortAt)
      abandon(w);
    if (!inst->isTerminator())
      return;
    const llvm::BasicBlock* bb = inst->getParent();
    if (bb != w.lastBlock)
    {
      auto it = m_blockIndex.find(bb);
      w.lastIndex = it == m_blockIndex.end() ? NONE : it->second;
      w.lastBlock = bb;
    }
    if (w.lastIndex != NONE)
      ++w.counts[w.item * m_blocks.size() + w.lastIndex];
  }

  void workItemComplete(const oclgrind::WorkItem* wi) override
  {
    Worker& w = worker();
    w.done[local(w, wi)] = 1;
  }

  void memoryLoad(const oclgrind::Memory* m, const oclgrind::WorkItem* wi, size_t address, size_t size) override
  {
    record(m, wi, address, size, 0);
  }
  void memoryStore(const oclgrind::Memory* m, const oclgrind::WorkItem* wi, size_t address, size_t size,
                   const uint8_t*) override
  {
    record(m, wi, address, size, 1);
  }
  void memoryAtomicLoad(const oclgrind::Memory* m, const oclgrind::WorkItem* wi, oclgrind::AtomicOp,
                        size_t address, size_t size) override
  {
    record(m, wi, address, size, 2); // an atomic also notifies its store half: counted once, here
  }
  void memoryLoad(const oclgrind::Memory* m, const oclgrind::WorkGroup*, size_t address, size_t size) override
  {
    record(m, nullptr, address, size, 0); // async_work_group_copy, done by the group at its wait
  }
  void memoryStore(const oclgrind::Memory* m, const oclgrind::WorkGroup*, size_t address, size_t size,
                   const uint8_t*) override
  {
    record(m, nullptr, address, size, 1);
  }

  void log(oclgrind::MessageType type, const char* message) override
  {
    if (type != oclgrind::ERROR || std::strstr(message, STOP_MARK))
      return;
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_messages.size() < 8)
      m_messages.emplace_back(std::string(message).substr(0, 600));
    ++m_errors;
  }

  void workGroupComplete(const oclgrind::WorkGroup*) override
  {
    Worker& w = worker();
    std::lock_guard<std::mutex> lock(m_mutex);
    GroupRun run = addItems(w, m_counts, false);
    m_ran.push_back(run);
    m_groupSeconds += now() - w.began;
    keepRecords(w, m_records, m_tracedRan);
  }

  void kernelEnd(const oclgrind::KernelInvocation*) override
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_ran.empty())
    {
      // no group finished: the abandoned groups' accesses, as far as they got, are all there is
      m_records.swap(m_partialRecords);
      m_tracedRan.swap(m_partialTraced);
    }
    {
      std::ofstream trace(m_out + ".trace", std::ios::binary);
      trace.write(reinterpret_cast<const char*>(m_records.data()), m_records.size() * sizeof(Record));
    }
    std::ofstream js(m_out + ".json.part");
    writeJson(js);
    js.close();
    // complete or absent: the reader never sees half a file
    std::rename((m_out + ".json.part").c_str(), (m_out + ".json").c_str());
  }

private:
  struct Worker
  {
    size_t group = 0, items = 0;
    oclgrind::Size3 groupSize;
    bool traced = false;
    uint64_t ticks = 0;
    double began = 0;
    std::vector<uint32_t> counts;       // work-item x block of m_blocks
    std::vector<uint64_t> instructions; // per work-item
    std::vector<uint64_t> accesses;     // per work-item: global, constant and __local
    std::vector<uint8_t> done;          // work-items that finished
    const oclgrind::WorkItem* lastItem = nullptr;
    size_t item = 0; // lastItem's linear local id
    const llvm::BasicBlock* lastBlock = nullptr;
    uint32_t lastIndex = NONE;
    std::vector<uint32_t> seq; // accesses so far, per work-item of a traced group
    uint64_t itemCap = 0;      // records kept of one work-item
    std::vector<Record> records;
    std::unordered_map<size_t, int16_t> localArg; // local buffer number -> kernel argument
  };

  struct Traced
  {
    size_t group;
    std::vector<uint32_t> made; // accesses per work-item, the kept ones and those past its cap
  };

  struct GroupRun
  {
    size_t group, items;
    uint64_t instructions, accesses;
  };

  // A group still running at the time limit: the work-items it finished are kept apart (the counts
  // of a launch whose first group alone outlasts the budget), then its worker stops.
  [[noreturn]] void abandon(Worker& w)
  {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_aborted = true;
      GroupRun finished = addItems(w, m_partialCounts, true);
      if (finished.items)
        m_partialGroups.push_back(finished);
      addUnfinished(w);
      keepRecords(w, m_partialRecords, m_partialTraced);
    }
    throw oclgrind::FatalError(std::string(STOP_MARK) + "work-group abandoned at the time limit", __FILE__,
                               __LINE__);
  }

  // add the work-items' block counts of ``w``'s group into ``into`` (only the finished ones when
  // ``finishedOnly``); returns the group, those work-items and their instructions and accesses. Holds
  // m_mutex.
  GroupRun addItems(const Worker& w, std::vector<uint64_t>& into, bool finishedOnly)
  {
    size_t nb = m_blocks.size();
    GroupRun run = {w.group, 0, 0, 0};
    for (size_t i = 0; i < w.items; ++i)
    {
      if (finishedOnly && !w.done[i])
        continue;
      for (size_t b = 0; b < nb; ++b)
        into[b] += w.counts[i * nb + b];
      ++run.items;
      run.instructions += w.instructions[i];
      m_longestItem = std::max(m_longestItem, w.instructions[i]);
      run.accesses += w.accesses[i];
    }
    m_partialItems += finishedOnly ? run.items : 0;
    return run;
  }

  // add the block counts of ``w``'s work-items that started and did not finish. Holds m_mutex.
  void addUnfinished(const Worker& w)
  {
    size_t nb = m_blocks.size();
    for (size_t i = 0; i < w.items; ++i)
    {
      if (w.done[i] || !w.instructions[i])
        continue;
      for (size_t b = 0; b < nb; ++b)
        m_unfinishedCounts[b] += w.counts[i * nb + b];
      ++m_unfinishedItems;
      m_unfinishedInstructions += w.instructions[i];
      m_longestItem = std::max(m_longestItem, w.instructions[i]);
      m_unfinishedAccesses += w.accesses[i];
    }
  }

  // a traced group's records, and its work-items' accesses made (kept or not). Holds m_mutex.
  void keepRecords(Worker& w, std::vector<Record>& into, std::vector<Traced>& groups)
  {
    if (!w.traced)
      return;
    size_t room = m_cap > into.size() ? m_cap - into.size() : 0;
    if (w.records.size() > room)
    {
      m_truncated = true;
      w.records.resize(room);
    }
    into.insert(into.end(), w.records.begin(), w.records.end());
    groups.push_back({w.group, w.seq});
  }

  size_t local(const Worker& w, const oclgrind::WorkItem* wi) const
  {
    oclgrind::Size3 l = wi->getLocalID();
    return l.x + w.groupSize.x * (l.y + w.groupSize.y * l.z);
  }

  double meanGroupSeconds()
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_ran.empty() ? 0.0 : m_groupSeconds / double(m_ran.size());
  }

  static Worker& worker()
  {
    static thread_local Worker w;
    return w;
  }

  // number every block, and every instruction that may touch memory, of the kernel's module
  void indexModule()
  {
    for (const llvm::Function& f : *m_function->getParent())
      for (const llvm::BasicBlock& bb : f)
      {
        m_blockIndex[&bb] = m_blocks.size();
        m_blocks.push_back(&bb);
        for (const llvm::Instruction& i : bb)
          if (i.mayReadOrWriteMemory())
          {
            m_siteIndex[&i] = m_sites.size();
            m_sites.push_back(&i);
          }
      }
    m_counts.assign(m_blocks.size(), 0);
    m_partialCounts.assign(m_blocks.size(), 0);
    m_unfinishedCounts.assign(m_blocks.size(), 0);
  }

  // which kernel argument each global buffer and each __local allocation belongs to
  void indexBuffers(const oclgrind::Kernel* kernel)
  {
    std::unordered_map<const llvm::Value*, int16_t> argIndex;
    int16_t a = 0;
    for (const llvm::Argument& arg : m_function->args())
      argIndex[&arg] = a++;
    for (auto v = kernel->values_begin(); v != kernel->values_end(); ++v)
    {
      const llvm::Type* type = v->first->getType();
      if (!type->isPointerTy())
        continue;
      auto found = argIndex.find(v->first);
      int16_t index = found == argIndex.end() ? -1 : found->second;
      if (type->getPointerAddressSpace() == oclgrind::AddrSpaceLocal)
        m_localValues.emplace_back(v->first, index);
      else if (index >= 0 && v->second.size == sizeof(size_t))
        m_globalArg[m_context->getGlobalMemory()->extractBuffer(v->second.getPointer())] = index;
    }
  }

  void record(const oclgrind::Memory* m, const oclgrind::WorkItem* wi, size_t address, size_t size,
              uint8_t kind)
  {
    unsigned space = m->getAddressSpace();
    if (space == oclgrind::AddrSpacePrivate)
      return;
    Worker& w = worker();
    if (wi)
      ++w.accesses[local(w, wi)];
    if (!w.traced)
      return;
    Record r;
    r.group = w.group;
    r.item = NONE;
    r.site = NONE;
    r.seq = 0;
    if (wi)
    {
      r.item = local(w, wi);
      r.seq = w.seq[r.item]++;
      if (r.seq >= w.itemCap)
      {
        if (!m_truncated.load(std::memory_order_relaxed)) // no store on every access: two workers share it
          m_truncated = true;                              // its later accesses counted (seq), not kept
        return;
      }
      auto it = m_siteIndex.find(wi->getCurrentInstruction());
      r.site = it == m_siteIndex.end() ? NONE : it->second;
    }
    size_t buffer = m->extractBuffer(address);
    r.offset = m->extractOffset(address);
    r.buffer = uint16_t(buffer);
    if (space == oclgrind::AddrSpaceLocal)
    {
      auto it = w.localArg.find(buffer);
      r.arg = it == w.localArg.end() ? -1 : it->second;
    }
    else
    {
      auto it = m_globalArg.find(buffer);
      r.arg = it == m_globalArg.end() ? -1 : it->second;
    }
    r.size = uint16_t(std::min<size_t>(size, 0xffff));
    r.kind = kind;
    r.space = uint8_t(space);
    if (w.records.size() >= m_cap) // a group's copies past the cap
    {
      m_truncated = true;
      return;
    }
    w.records.push_back(r);
  }

  void writeJson(std::ostream& js) const
  {
    js << "{\"kernel\":" << quoted(m_kernel) << ",\"num_groups\":[" << m_numGroups[0] << ","
       << m_numGroups[1] << "," << m_numGroups[2] << "],\"local_size\":[" << m_localSize.x << ","
       << m_localSize.y << "," << m_localSize.z << "],\"planned\":" << m_planned
       << ",\"budget_spent\":" << (m_budgetSpent ? "true" : "false")
       << ",\"aborted\":" << (m_aborted ? "true" : "false")
       << ",\"trace_truncated\":" << (m_truncated ? "true" : "false") << ",\"errors\":" << m_errors
       << ",\"partial_items\":" << m_partialItems << ",\"unfinished_items\":" << m_unfinishedItems
       << ",\"unfinished_instructions\":" << m_unfinishedInstructions
       << ",\"unfinished_accesses\":" << m_unfinishedAccesses << ",\"longest_item\":" << m_longestItem
       << ",\"messages\":[";
    for (size_t i = 0; i < m_messages.size(); ++i)
      js << (i ? "," : "") << quoted(m_messages[i]);
    js << "],\"groups\":[";
    for (size_t i = 0; i < m_ran.size(); ++i)
      js << (i ? "," : "") << "[" << m_ran[i].group << "," << m_ran[i].items << "," << m_ran[i].instructions
         << "," << m_ran[i].accesses << "]";
    js << "],\"partial_groups\":[";
    for (size_t i = 0; i < m_partialGroups.size(); ++i)
      js << (i ? "," : "") << "[" << m_partialGroups[i].group << "," << m_partialGroups[i].items << ","
         << m_partialGroups[i].instructions << "," << m_partialGroups[i].accesses << "]";
    js << "],\"traced\":[";
    for (size_t i = 0; i < m_tracedRan.size(); ++i)
      js << (i ? "," : "") << m_tracedRan[i].group;
    js << "],\"traced_made\":[";
    for (size_t i = 0; i < m_tracedRan.size(); ++i)
    {
      js << (i ? "," : "") << "[";
      const std::vector<uint32_t>& made = m_tracedRan[i].made;
      for (size_t k = 0; k < made.size(); ++k)
        js << (k ? "," : "") << made[k];
      js << "]";
    }
    js << "],\"blocks\":[";
    for (size_t b = 0; b < m_blocks.size(); ++b)
    {
      const llvm::BasicBlock* bb = m_blocks[b];
      const llvm::Instruction* term = bb->getTerminator();
      const llvm::DILocation* loc = term ? term->getDebugLoc().get() : nullptr;
      js << (b ? "," : "") << "[" << quoted(bb->getParent()->getName().str()) << ","
         << quoted(bb->hasName() ? bb->getName().str() : "") << "," << m_counts[b] << ","
         << (loc ? loc->getLine() : 0) << "," << (loc ? loc->getColumn() : 0) << "," << m_partialCounts[b]
         << "," << m_unfinishedCounts[b] << "]";
    }
    js << "],\"sites\":[";
    llvm::StringRef mainFile = m_function->getSubprogram() ? m_function->getSubprogram()->getFilename() : "";
    for (size_t i = 0; i < m_sites.size(); ++i)
    {
      auto pos = sourcePosition(*m_sites[i], mainFile);
      js << (i ? "," : "") << "[" << m_blockIndex.at(m_sites[i]->getParent()) << "," << pos.first << ","
         << pos.second << "," << quoted(m_sites[i]->getOpcodeName()) << "]";
    }
    js << "]}\n";
  }

  const std::string m_out;
  const uint64_t m_sample, m_traceGroups, m_cap;
  const double m_deadline, m_abortAt;

  std::string m_kernel;
  const llvm::Function* m_function = nullptr;
  std::array<size_t, 3> m_numGroups = {1, 1, 1};
  oclgrind::Size3 m_localSize;
  size_t m_planned = 0;
  std::unordered_map<const llvm::BasicBlock*, uint32_t> m_blockIndex;
  std::vector<const llvm::BasicBlock*> m_blocks;
  std::unordered_map<const llvm::Instruction*, uint32_t> m_siteIndex;
  std::vector<const llvm::Instruction*> m_sites;
  std::unordered_map<size_t, int16_t> m_globalArg;                  // global buffer -> argument
  std::vector<std::pair<const llvm::Value*, int16_t>> m_localValues; // __local allocations
  std::unordered_set<size_t> m_traced;

  std::atomic<size_t> m_started{0};
  std::atomic<bool> m_truncated{false}, m_budgetSpent{false}, m_aborted{false};
  mutable std::mutex m_mutex; // guards everything below
  std::vector<uint64_t> m_counts, m_partialCounts; // per block: completed groups, abandoned groups' items
  uint64_t m_partialItems = 0;
  std::vector<uint64_t> m_unfinishedCounts; // per block: abandoned groups' unfinished work-items
  uint64_t m_unfinishedItems = 0, m_unfinishedInstructions = 0, m_unfinishedAccesses = 0;
  uint64_t m_longestItem = 0; // the most instructions one work-item ran, finished or not
  std::vector<GroupRun> m_partialGroups; // abandoned groups: their finished work-items, instructions
  std::vector<GroupRun> m_ran;
  std::vector<Traced> m_tracedRan;
  std::vector<Record> m_records, m_partialRecords; // completed traced groups, abandoned ones
  std::vector<Traced> m_partialTraced;
  std::vector<std::string> m_messages;
  uint64_t m_errors = 0;
  double m_groupSeconds = 0; // summed over the completed groups
};

CountPlugin* g_plugin = nullptr;
} // namespace

// Oclgrind calls these with its context when it loads and unloads the library
extern "C" void initializePlugins(oclgrind::Context* context)
{
  g_plugin = new CountPlugin(context);
  context->registerPlugin(g_plugin);
}

extern "C" void releasePlugins(oclgrind::Context* context)
{
  context->unregisterPlugin(g_plugin);
  delete g_plugin;
  g_plugin = nullptr;
}
