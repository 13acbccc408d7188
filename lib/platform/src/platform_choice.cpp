// choose_backend: the `auto` rules (DESIGN.md, from NVIDIA's CUDA for Tegra note and the programming
// guide), and the checks an explicit request must pass. Pure: tests feed it fabricated probes.
#include <atomic>
#include <cstdlib>
#include <sstream>

#include "depthmask/errors.h"
#include "depthmask/kernels/mask_kernel.h"
#include "depthmask/platform.h"

namespace depthmask {

namespace detail {
namespace {
std::atomic<bool> cuda_initialised_flag{false};
}  // namespace
bool cuda_initialised() noexcept { return cuda_initialised_flag.load(); }
void note_cuda_initialised() noexcept { cuda_initialised_flag.store(true); }

std::optional<std::string> cuda_visible_devices_env() {
  const char* v = std::getenv("CUDA_VISIBLE_DEVICES");
  if (!v) return std::nullopt;
  return std::string(v);
}
}  // namespace detail

PlatformInfo unprobed_platform() {
  PlatformInfo p;
  p.probed = false;
  p.cuda_built = have_cuda_kernels();
  p.build = this_build_targets();
  p.problem = p.cuda_built ? "CUDA not initialised (backend.kind: cpu)"
                           : "this depthmask was built without CUDA (no nvcc at build time)";
  p.cuda_visible_devices = detail::cuda_visible_devices_env();
  return p;
}

std::string cuda_version_string(int v) {
  if (v <= 0) return "none";
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

CompatInput compat_input(const PlatformInfo& p, const DeviceInfo& d) {
  CompatInput in;
  in.device_name = d.name;
  in.cc_major = d.cc_major;
  in.cc_minor = d.cc_minor;
  in.integrated = d.integrated;
  in.driver_version = p.driver_version;
  in.runtime_version = p.runtime_version;
  in.driver_release = p.driver_release;
  in.build = p.build;
  return in;
}

namespace {
std::string cc(const DeviceInfo& d) { return std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor); }

std::string visible_text(const std::string& v) { return "CUDA_VISIBLE_DEVICES=\"" + v + "\""; }

}  // namespace

// What CUDA_VISIBLE_DEVICES left this process and what the run uses.
std::string device_visibility(const BackendChoice& c, const PlatformInfo& p) {
  if (!p.cuda_visible_devices) return "";
  const std::string var = visible_text(*p.cuda_visible_devices);
  if (!p.cuda_built) return var + " is set; this build has no CUDA, so masking runs on the CPU";
  if (!p.probed) return var + " is set; backend.kind cpu uses no CUDA device";
  const std::string seen = p.devices.empty() ? "leaves no CUDA device visible"
                                             : "leaves " + std::to_string(p.devices.size()) + " CUDA device(s) visible";
  if (c.kind == BackendKind::Cpu) return var + " " + seen + "; masking runs on the CPU";
  const DeviceInfo& d = p.devices[static_cast<size_t>(c.device)];
  return var + " " + seen + "; backend " + std::string(to_string(c.kind)) + " uses visible device " +
         std::to_string(c.device) + " (" + d.name + ")";
}

BackendChoice choose_backend(const BackendConfig& req, const PlatformInfo& p) {
  BackendChoice c;
  c.device = req.device;
  const bool have_device = req.device >= 0 && static_cast<size_t>(req.device) < p.devices.size();
  std::string why_not;
  if (!p.cuda_built)
    why_not = "this depthmask was built without CUDA";
  else if (p.devices.empty() && p.cuda_visible_devices && p.probed)
    // A job engine's GPU per task (Slurm's gres, a pod's device plugin) hid them all: say so first.
    why_not = visible_text(*p.cuda_visible_devices) + " hides every CUDA device (" +
              (p.problem.empty() ? "no CUDA device found" : p.problem) + ")";
  else if (p.devices.empty())
    why_not = p.problem.empty() ? "no CUDA device found" : p.problem;
  else if (!have_device)
    why_not = "CUDA device " + std::to_string(req.device) + " does not exist (" + std::to_string(p.devices.size()) +
              " found)";
  else if (p.devices[static_cast<size_t>(req.device)].compat.level == CompatLevel::Fail)
    why_not = p.devices[static_cast<size_t>(req.device)].compat.message;  // the guard: say why, not "no kernel image"

  if (req.kind == BackendKind::Cpu) {
    c.kind = BackendKind::Cpu;
    c.reason = p.probed ? "backend.kind is cpu (forced in the configuration)"
                        : "backend.kind is cpu (forced in the configuration; CUDA not initialised)";
    return c;
  }
  if (req.kind != BackendKind::Auto) {
    // An explicit GPU backend: never silently downgraded.
    DM_EXPECT(why_not.empty(), PlatformError,
              "backend.kind is '" << to_string(req.kind) << "', which needs a CUDA GPU, but " << why_not
                                  << "; use backend.kind: cpu or auto");
    const DeviceInfo& d = p.devices[static_cast<size_t>(req.device)];
    if (req.kind == BackendKind::ZeroCopy)
      DM_EXPECT(d.can_map_host_memory, PlatformError,
                "backend.kind is 'zero_copy', but " << d.name << " cannot map host memory (canMapHostMemory = 0)");
    if (req.kind == BackendKind::Managed)
      DM_EXPECT(d.managed_memory, PlatformError,
                "backend.kind is 'managed', but " << d.name << " has no unified memory (managedMemory = 0)");
    c.kind = req.kind;
    c.reason = "backend.kind is " + std::string(to_string(req.kind)) + " (forced in the configuration), on " + d.name;
    return c;
  }

  // A device index that does not exist on a machine with devices is a mistake, not a reason to use the CPU.
  DM_EXPECT(!p.cuda_built || p.devices.empty() || have_device, PlatformError,
            "backend.device is " << req.device << ", but only " << p.devices.size() << " CUDA device(s) exist (0.."
                                 << p.devices.size() - 1 << ")");
  if (!why_not.empty()) {
    c.kind = BackendKind::Cpu;
    // A build without CUDA has only the CPU: nothing fell back, so it is no warning (a generated
    // configuration's run stays quiet there). A CUDA build without a usable GPU did fall back.
    c.degraded = p.cuda_built;
    c.reason = "auto: " + why_not + ", so masking runs on the CPU";
    return c;
  }
  const DeviceInfo& d = p.devices[static_cast<size_t>(req.device)];
  std::ostringstream os;
  if (d.integrated && d.can_map_host_memory) {
    c.kind = BackendKind::ZeroCopy;
    os << "auto: " << d.name << " (sm_" << d.cc_major << d.cc_minor
       << ") is an integrated GPU sharing DRAM with the CPU and can map host memory, so the kernel reads the "
          "loader's buffers in place (zero_copy)";
    if (d.cc_major * 10 + d.cc_minor < 72)
      os << "; note: before Xavier (cc " << cc(d)
         << " < 7.2) the CPU does not cache pinned memory, so CPU-heavy stages are slower";
  } else if (d.integrated) {
    c.kind = BackendKind::Managed;
    os << "auto: " << d.name << " is integrated but cannot map host memory, so unified memory (managed) is used";
  } else {
    c.kind = BackendKind::Copy;
    os << "auto: " << d.name << " (sm_" << d.cc_major << d.cc_minor
       << ") is a discrete GPU with its own memory, so frames are staged in pinned buffers and copied "
          "asynchronously (copy)";
  }
  c.reason = os.str();
  return c;
}

}  // namespace depthmask
