// The run-time compatibility guard's decision (compat.h): pure functions over versions and
// architecture lists; platform_cuda.cpp feeds them what the driver reports.
#include "depthmask/compat.h"

#include <algorithm>
#include <cstdlib>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "depthmask/detail/enum_names.h"
#include "depthmask/platform.h"

namespace depthmask {

namespace {

std::string cc_text(int cc) { return std::to_string(cc / 10) + "." + std::to_string(cc % 10); }

// The oldest driver branch that runs a CUDA major version (CUDA Compatibility guide, table 1).
int min_driver_branch(int cuda_major) {
  switch (cuda_major) {
    case 11:
      return 450;
    case 12:
      return 525;
    case 13:
      return 580;
    default:
      return 0;
  }
}

std::string join(const std::vector<CudaArch>& v, bool ptx, const std::string& sep = ", ") {
  std::string s;
  for (const CudaArch& a : v) s += (s.empty() ? "" : sep) + to_string(a, ptx);
  return s;
}

std::string built_for(const BuildTargets& b) {
  std::ostringstream os;
  os << (b.image.empty() ? "this depthmask" : "this image (" + b.image + ")") << " was built for ";
  if (!b.known) {
    os << "CUDA_ARCHITECTURES '" << b.list << "'";
  } else {
    std::string archs = join(b.sass, false);
    const std::string ptx = join(b.ptx, true);
    if (!ptx.empty()) archs += (archs.empty() ? "" : " + ") + ptx;
    os << (archs.empty() ? "no GPU architecture" : archs);
  }
  if (b.toolkit_version > 0) os << " and CUDA " << cuda_version_string(b.toolkit_version);
  return os.str();
}

std::string this_gpu(const CompatInput& in) {
  std::ostringstream os;
  os << "this GPU";
  if (!in.device_name.empty()) os << " (" << in.device_name << ")";
  os << " is sm_" << in.cc_major << in.cc_minor << " with a driver for CUDA " << cuda_version_string(in.driver_version);
  if (!in.driver_release.empty()) os << " (driver " << in.driver_release << ")";
  return os.str();
}

// What to run instead on this device.
std::string suggestion(const CompatInput& in) {
  const int cc = in.cc_major * 10 + in.cc_minor;
  const std::string arch = std::to_string(cc);
  if (in.integrated && is_tegra_cc(in.cc_major, in.cc_minor)) {
    if (cc == 87)
      return "use the JetPack 6 image (docker/Dockerfile.jetson, --build-arg JETPACK=6), or build with "
             "-DCMAKE_CUDA_ARCHITECTURES=87";
    if (cc == 110 || cc == 101)
      return "use the JetPack 7 image (docker/Dockerfile.jetson, --build-arg JETPACK=7), or build with CUDA 13 and "
             "-DCMAKE_CUDA_ARCHITECTURES=110";
    return "the images cover Jetson Orin (JetPack 6) and Thor (JetPack 7); for this Jetson build from source with its "
           "JetPack's CUDA and -DCMAKE_CUDA_ARCHITECTURES=" +
           arch;
  }
  return "use the x86_64 image (docker/Dockerfile), or build with -DCMAKE_CUDA_ARCHITECTURES=" + arch;
}

// The best cubin for the device, if any (see the rules in compat.h).
std::optional<CudaArch> pick_sass(const BuildTargets& b, int cc, bool tegra) {
  std::optional<CudaArch> best;
  for (const CudaArch& s : b.sass) {
    bool runs = s.cc == cc;
    if (!runs && !tegra && !is_tegra_cc(s.cc / 10, s.cc % 10) && s.suffix != 'a')
      runs = s.cc / 10 == cc / 10 && s.cc < cc;
    if (runs && (!best || s.cc > best->cc)) best = s;
  }
  return best;
}

std::optional<CudaArch> pick_ptx(const BuildTargets& b, int cc) {
  std::optional<CudaArch> best;
  for (const CudaArch& p : b.ptx) {
    bool runs = p.cc <= cc;
    if (p.suffix == 'a') runs = p.cc == cc;
    if (p.suffix == 'f') runs = runs && p.cc / 10 == cc / 10;
    if (runs && (!best || p.cc > best->cc)) best = p;
  }
  return best;
}

// The static rules alone.
CompatVerdict image_by_rules(const CompatInput& in) {
  CompatVerdict v;
  const int cc = in.cc_major * 10 + in.cc_minor;
  const bool tegra = in.integrated && is_tegra_cc(in.cc_major, in.cc_minor);
  const std::string dev = "sm_" + std::to_string(cc);
  if (!in.build.known) {
    v.level = CompatLevel::Warn;
    v.how = "unknown before the first launch";
    v.message = built_for(in.build) + ", which cannot be checked against " + dev + " before the first launch";
    return v;
  }
  if (const auto s = pick_sass(in.build, cc, tegra)) {
    v.how = "SASS " + to_string(*s, false);
    if (s->cc != cc) v.how += " (runs on " + dev + ": same major version, newer minor)";
    return v;
  }
  const std::string no_sass = built_for(in.build) + "; " + this_gpu(in);
  if (const auto p = pick_ptx(in.build, cc)) {
    if (in.build.toolkit_version > 0 && in.driver_version < in.build.toolkit_version) {
      v.level = CompatLevel::Fail;
      v.message = no_sass + ": it has no SASS for " + dev + ", and its " + to_string(*p, true) +
                  " PTX needs a driver for CUDA " + cuda_version_string(in.build.toolkit_version) +
                  " or newer to be JIT-compiled; update the driver or " + suggestion(in);
      return v;
    }
    v.level = CompatLevel::Warn;
    v.how = "PTX " + to_string(*p, true) + " JIT-compiled for " + dev;
    v.message = no_sass + ": no SASS for " + dev + ", so the driver JIT-compiles the " + to_string(*p, true) +
                " PTX at start (slower first start; cached in ~/.nv/ComputeCache); for native code " + suggestion(in);
    return v;
  }
  v.level = CompatLevel::Fail;
  v.message = no_sass + ": no kernel image can run on it";
  if (tegra && !in.build.sass.empty()) v.message += " (Jetson GPUs run only SASS built for their exact sm)";
  v.message += "; " + suggestion(in);
  return v;
}

}  // namespace

std::string to_string(const CudaArch& a, bool ptx) {
  std::string s = (ptx ? "compute_" : "sm_") + std::to_string(a.cc);
  if (a.suffix) s += a.suffix;
  return s;
}

constexpr detail::EnumName<CompatLevel> kCompatLevels[] = {
    {CompatLevel::Ok, "ok"}, {CompatLevel::Warn, "warning"}, {CompatLevel::Fail, "unusable"}};

std::string_view to_string(CompatLevel l) { return detail::name_of(kCompatLevels, l); }

bool is_tegra_cc(int major, int minor) {
  const int cc = major * 10 + minor;
  return cc == 53 || cc == 62 || cc == 72 || cc == 87 || cc == 101 || cc == 110;
}

BuildTargets parse_cuda_architectures(std::string_view list, int toolkit_version) {
  BuildTargets b;
  b.list = std::string(list);
  b.toolkit_version = toolkit_version;
  std::string item;
  std::istringstream is{std::string(list)};
  while (std::getline(is, item, list.find(';') != std::string_view::npos ? ';' : ',')) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (item.empty()) continue;
    if (item == "all" || item == "all-major" || item == "native" || item == "OFF") {
      b.known = false;
      continue;
    }
    bool real = true, virt = true;
    std::string num = item;
    if (const auto dash = item.find('-'); dash != std::string::npos) {
      const std::string kind = item.substr(dash + 1);
      num = item.substr(0, dash);
      if (kind == "real")
        virt = false;
      else if (kind == "virtual")
        real = false;
      else
        throw std::invalid_argument("CUDA architecture '" + item + "': expected -real or -virtual after the number");
    }
    CudaArch a;
    if (!num.empty() && (num.back() == 'a' || num.back() == 'f')) {
      a.suffix = num.back();
      num.pop_back();
    }
    if (num.empty() || num.size() > 3 || num.find_first_not_of("0123456789") != std::string::npos)
      throw std::invalid_argument("CUDA architecture '" + item + "': expected a number such as 87, 87-real or 90a");
    a.cc = std::stoi(num);
    if (real) b.sass.push_back(a);
    if (virt) b.ptx.push_back(a);
  }
  return b;
}

CompatVerdict check_driver(int runtime_version, int driver_version, const BuildTargets& build) {
  CompatVerdict v;
  const std::string who = build.image.empty() ? "this depthmask" : "this image (" + build.image + ")";
  if (driver_version <= 0) {
    v.level = CompatLevel::Fail;
    v.message = who +
                " needs the NVIDIA driver, but none is loaded (or it is not visible in this container: run it "
                "with the NVIDIA runtime, `--runtime nvidia` or `--gpus all`)";
    return v;
  }
  const int rt_major = runtime_version / 1000, drv_major = driver_version / 1000;
  if (drv_major < rt_major) {
    v.level = CompatLevel::Fail;
    std::ostringstream os;
    os << who << " uses the CUDA " << cuda_version_string(runtime_version) << " runtime, but the driver supports CUDA "
       << cuda_version_string(driver_version) << " at most";
    if (const int branch = min_driver_branch(rt_major))
      os << " (CUDA " << rt_major << ".x needs driver " << branch << " or newer)";
    os << ": update the driver (on a Jetson: the JetPack), or use an image built with CUDA " << drv_major << ".x";
    if (drv_major == 12) os << " (on Orin: the JetPack 6 image)";
    v.message = os.str();
    return v;
  }
  if (driver_version < runtime_version) {
    v.level = CompatLevel::Warn;
    v.message = "the driver supports CUDA " + cuda_version_string(driver_version) + ", older than the CUDA " +
                cuda_version_string(runtime_version) +
                " runtime: it runs through minor version compatibility (SASS kernels run; PTX newer than the driver "
                "cannot be JIT-compiled); a newer driver is advised";
  }
  return v;
}

CompatVerdict check_compat(const CompatInput& in) {
  CompatVerdict drv = check_driver(in.runtime_version, in.driver_version, in.build);
  if (drv.level == CompatLevel::Fail) return drv;
  CompatVerdict v = image_by_rules(in);
  if (in.probe) {
    const std::string dev = "sm_" + std::to_string(in.cc_major) + std::to_string(in.cc_minor);
    if (in.probe->loaded && v.level != CompatLevel::Ok) {
      // The driver found an image the rules did not predict (or could not, for "native"): it knows best.
      const bool jit = in.probe->binary_version == in.cc_major * 10 + in.cc_minor && in.probe->ptx_version > 0 &&
                       v.how.rfind("PTX", 0) == 0;
      if (!jit) {
        v.level = CompatLevel::Ok;
        v.how = "the driver loaded an image for " + dev + " (binary version " + cc_text(in.probe->binary_version) +
                (in.probe->ptx_version > 0 ? ", PTX " + cc_text(in.probe->ptx_version) : "") + ")";
        v.message.clear();
      }
    } else if (!in.probe->loaded) {
      if (v.level == CompatLevel::Fail)
        v.message += " (the driver says " + in.probe->error + ")";
      else
        v.message = built_for(in.build) + "; " + this_gpu(in) + ": the driver loads no kernel image for it (" +
                    in.probe->error + "); " + suggestion(in);
      v.level = CompatLevel::Fail;
      v.how.clear();
      return v;
    }
  }
  if (drv.level == CompatLevel::Warn) {
    if (v.level == CompatLevel::Ok) v.level = CompatLevel::Warn;
    v.message += (v.message.empty() ? "" : "; ") + drv.message;
  }
  return v;
}

std::string parse_nvidia_driver_release(std::string_view text) {
  // The first dotted number after "Kernel Module" ("... Open Kernel Module for aarch64  580.00 ...").
  static const std::regex release(R"(Kernel Module[^\n]*?\s([0-9]+\.[0-9]+(\.[0-9]+)?)\s)");
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_search(text.begin(), text.end(), m, release)) return "";
  return m.str(1);
}

BuildTargets this_build_targets() {
#if defined(DEPTHMASK_CUDA_ARCHS) && defined(DEPTHMASK_CUDA_TOOLKIT)
  int major = 0, minor = 0;
  const std::string tk = DEPTHMASK_CUDA_TOOLKIT;
  const auto dot = tk.find('.');
  if (dot != std::string::npos) {
    major = std::atoi(tk.c_str());
    minor = std::atoi(tk.c_str() + dot + 1);
  }
  BuildTargets b = parse_cuda_architectures(DEPTHMASK_CUDA_ARCHS, major * 1000 + minor * 10);
#else
  BuildTargets b;
  b.known = false;
#endif
  if (const char* image = std::getenv("DEPTHMASK_IMAGE")) b.image = image;
  return b;
}

}  // namespace depthmask
