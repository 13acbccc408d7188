// The deployment files cannot drift apart unnoticed. No Docker engine runs on the development or CI
// machines, so these tests read the Dockerfiles, compose.yaml and the scripts as text and check what
// keeps the images honest: every image installs packages with scripts/install-deps.sh and builds with
// cmake/release-options.cmake through scripts/docker-steps.sh (the script CI runs too), the build
// stages are CUDA devel images and the final ones runtime images, each image's architecture list
// fits its GPUs, nothing at configure time downloads, compose's services have what `run` and `live`
// need, and every config/*.yaml loads.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "depthmask/compat.h"
#include "depthmask/config.h"
#include "test_support.h"

namespace dm = depthmask;
namespace fs = std::filesystem;

namespace {

std::string read_text(const fs::path& p) {
  std::ifstream f(p);
  EXPECT_TRUE(f.good()) << "cannot read " << p;
  std::ostringstream os;
  os << f.rdbuf();
  return os.str();
}

fs::path repo() { return dmtest::source_dir(); }

// The deployment files are the checkout's: a GPU bundle (scripts/make-gpu-bundle.sh) carries config/
// but not docker/, .ci/ or examples/, so these tests skip there, saying so, rather than fail.
#define DM_REQUIRE_DEPLOY_FILES()                                                                         \
  do {                                                                                                    \
    if (!fs::exists(repo() / "docker" / "Dockerfile") || !fs::exists(repo() / ".ci" / "run"))             \
      GTEST_SKIP() << "the deployment files (docker/, .ci/) are not in " << repo() << ": not a checkout"; \
  } while (0)

bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

// A Dockerfile as its instructions: continuation lines joined, comments dropped.
struct Instruction {
  std::string op;    // FROM, RUN, ARG ... (upper case as written)
  std::string args;  // the rest, continuations joined with a space
};

std::vector<Instruction> parse_dockerfile(const fs::path& p) {
  std::vector<Instruction> out;
  std::istringstream is(read_text(p));
  std::string line, pending;
  while (std::getline(is, line)) {
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    if (!line.empty() && line.back() == '\\') {
      pending += line.substr(0, line.size() - 1) + " ";
      continue;
    }
    pending += line;
    const auto start = pending.find_first_not_of(" \t");
    const auto sp = pending.find_first_of(" \t", start);
    out.push_back({pending.substr(start, sp - start), sp == std::string::npos ? "" : pending.substr(sp + 1)});
    pending.clear();
  }
  return out;
}

// ARG NAME=default values (quotes removed).
std::map<std::string, std::string> arg_defaults(const std::vector<Instruction>& ins) {
  std::map<std::string, std::string> m;
  for (const Instruction& i : ins) {
    if (i.op != "ARG") continue;
    const auto eq = i.args.find('=');
    if (eq == std::string::npos) continue;
    std::string v = i.args.substr(eq + 1);
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
    m[i.args.substr(0, eq)] = v;
  }
  return m;
}

// The stages: each FROM and the instructions up to the next one.
struct Stage {
  std::string from;
  std::vector<Instruction> body;
};
std::vector<Stage> stages(const std::vector<Instruction>& ins) {
  std::vector<Stage> out;
  for (const Instruction& i : ins) {
    if (i.op == "FROM")
      out.push_back({i.args, {}});
    else if (!out.empty())
      out.back().body.push_back(i);
  }
  return out;
}

std::string runs_of(const Stage& s) {
  std::string r;
  for (const Instruction& i : s.body)
    if (i.op == "RUN") r += i.args + "\n";
  return r;
}

// Commands that belong in the shared scripts, never in a Dockerfile's RUN.
void expect_no_private_steps(const fs::path& file, const std::string& runs) {
  static const std::regex own_step(R"((^|[\s;&|(])(cmake|apt-get|apt|pip3?|make|ninja|nvcc|ctest)(\s|$))");
  std::smatch m;
  EXPECT_FALSE(std::regex_search(runs, m, own_step))
      << file << " runs '" << m.str(2) << "' itself: packages come from scripts/install-deps.sh and the build from "
      << "scripts/docker-steps.sh (cmake/release-options.cmake), so the images, the README and CI stay alike";
}

void expect_image_shape(const fs::path& file) {
  const std::vector<Instruction> ins = parse_dockerfile(file);
  const std::vector<Stage> st = stages(ins);
  ASSERT_GE(st.size(), 2u) << file << ": expected a build stage and a runtime stage";
  std::string all_runs;
  for (const Stage& s : st) all_runs += runs_of(s);
  EXPECT_TRUE(has(all_runs, "bash scripts/docker-steps.sh build "))
      << file << " must build with scripts/docker-steps.sh build";
  EXPECT_TRUE(has(all_runs, "bash scripts/docker-steps.sh stage "))
      << file << " must stage with scripts/docker-steps.sh stage";
  expect_no_private_steps(file, all_runs);

  const Stage& last = st.back();
  const std::string last_runs = runs_of(last);
  EXPECT_TRUE(has(last_runs, "docker-steps.sh runtime /opt/depthmask"))
      << file
      << ": the runtime stage must install its packages with docker-steps.sh runtime (install-deps.sh --runtime)";
  EXPECT_TRUE(has(last_runs, "docker-steps.sh user ")) << file << ": the runtime stage must create its user";
  std::map<std::string, std::string> last_ops;
  for (const Instruction& i : last.body) last_ops[i.op] = i.args;
  EXPECT_TRUE(last_ops.count("USER") && last_ops["USER"] != "root" && last_ops["USER"] != "0")
      << file << ": the image must run as a non-root USER";
  EXPECT_EQ(last_ops["ENTRYPOINT"], R"(["depthmask"])") << file;
  EXPECT_TRUE(has(last_ops["HEALTHCHECK"], "healthcheck.sh")) << file << ": HEALTHCHECK must run docker/healthcheck.sh";
  // The image is named for the compatibility guard: in the last stage, or (a last stage chosen by a
  // build argument, FROM runtime-${BUILD}) in each runtime stage it may be.
  if (last.from.rfind("runtime-${", 0) == 0) {
    int named = 0;
    for (const Stage& s : st) {
      if (!has(s.from, " AS runtime-") || has(s.from, " AS runtime-jetpack")) continue;
      std::string env;
      for (const Instruction& i : s.body)
        if (i.op == "ENV") env += i.args;
      EXPECT_TRUE(has(env, "DEPTHMASK_IMAGE=")) << file << ": " << s.from << " must name the image";
      ++named;
    }
    EXPECT_GE(named, 2) << file << ": expected a runtime stage per BUILD";
  } else {
    EXPECT_TRUE(has(last_ops["ENV"], "DEPTHMASK_IMAGE=")) << file << ": name the image for the compatibility guard";
  }
  EXPECT_TRUE(has(last_ops["ENV"], "PYTHONPATH=/opt/depthmask/lib/python3/dist-packages"))
      << file << ": `import depthmask` in the image needs the staged package on the path";
  EXPECT_TRUE(fs::exists(repo() / "docker" / "healthcheck.sh"));
}

// Resolves YAML merge keys ("<<: *anchor" or a list of them) the way compose does: the map's own keys
// win, then the merged maps in order.
YAML::Node merged(const YAML::Node& n) {
  if (!n.IsMap()) return n;
  YAML::Node out(YAML::NodeType::Map);
  for (const auto& kv : n)
    if (kv.first.as<std::string>() != "<<") out[kv.first.as<std::string>()] = kv.second;
  if (const YAML::Node m = n["<<"]) {
    std::vector<YAML::Node> sources;
    if (m.IsSequence())
      for (const auto& s : m) sources.push_back(s);
    else
      sources.push_back(m);
    for (const YAML::Node& s : sources)
      for (const auto& kv : merged(s))
        if (!out[kv.first.as<std::string>()]) out[kv.first.as<std::string>()] = kv.second;
  }
  return out;
}

// "${VAR:-default}" -> "default", as compose substitutes with VAR unset.
std::string with_defaults(std::string s) {
  static const std::regex var(R"(\$\{[A-Z_]+:-([^}]*)\})");
  return std::regex_replace(s, var, "$1");
}

}  // namespace

TEST(DeployFiles, DockerfilesUseTheSharedScriptsAndStageShape) {
  DM_REQUIRE_DEPLOY_FILES();
  expect_image_shape(repo() / "docker" / "Dockerfile");
  expect_image_shape(repo() / "docker" / "Dockerfile.jetson");
}

TEST(DeployFiles, X86ImageBuildsOnCudaDevelAndRunsOnTheMatchingRuntime) {
  DM_REQUIRE_DEPLOY_FILES();
  const std::vector<Instruction> ins = parse_dockerfile(repo() / "docker" / "Dockerfile");
  const std::vector<Stage> st = stages(ins);
  ASSERT_EQ(st.size(), 2u);
  auto args = arg_defaults(ins);
  // The bases are build arguments (CI passes local Debian ones); their defaults are NVIDIA's pair.
  EXPECT_EQ(st[0].from, "${BUILD_IMAGE} AS build");
  EXPECT_EQ(st[1].from, "${RUNTIME_IMAGE}");
  EXPECT_EQ(args["BUILD_IMAGE"], "nvidia/cuda:${CUDA_VERSION}-devel-ubuntu${UBUNTU_VERSION}");
  EXPECT_EQ(args["RUNTIME_IMAGE"], "nvidia/cuda:${CUDA_VERSION}-runtime-ubuntu${UBUNTU_VERSION}");
  EXPECT_EQ(args["CUDA_VERSION"].substr(0, 3), "13.") << "the x86_64 image is CUDA 13.x";
  const dm::BuildTargets t = dm::parse_cuda_architectures(args["CUDA_ARCHITECTURES"], 13000);
  EXPECT_TRUE(t.known);
  for (const dm::CudaArch& a : t.sass)
    EXPECT_FALSE(dm::is_tegra_cc(a.cc / 10, a.cc % 10)) << "x86_64 image carries Jetson SASS sm_" << a.cc;
  EXPECT_FALSE(t.ptx.empty()) << "the x86_64 image needs PTX of its newest architecture for later GPUs";
}

TEST(DeployFiles, JetsonImageHasOneStagePairPerJetPackAndItsOwnSm) {
  DM_REQUIRE_DEPLOY_FILES();
  const std::vector<Instruction> ins = parse_dockerfile(repo() / "docker" / "Dockerfile.jetson");
  auto args = arg_defaults(ins);
  EXPECT_EQ(args["JETPACK"], "6");
  EXPECT_TRUE(has(args["JP6_BUILD_IMAGE"], "l4t-jetpack:r36.")) << args["JP6_BUILD_IMAGE"];
  EXPECT_TRUE(has(args["JP6_RUNTIME_IMAGE"], "l4t-cuda:12.") && has(args["JP6_RUNTIME_IMAGE"], "-runtime"))
      << args["JP6_RUNTIME_IMAGE"];
  EXPECT_TRUE(has(args["JP7_BUILD_IMAGE"], ":13.") && has(args["JP7_BUILD_IMAGE"], "-devel-"))
      << args["JP7_BUILD_IMAGE"];
  EXPECT_TRUE(has(args["JP7_RUNTIME_IMAGE"], ":13.") && has(args["JP7_RUNTIME_IMAGE"], "-runtime-"))
      << args["JP7_RUNTIME_IMAGE"];
  // A Jetson runs only SASS of its own sm: Orin 8.7 on JetPack 6, Thor 11.0 on JetPack 7.
  const dm::BuildTargets jp6 = dm::parse_cuda_architectures(args["JP6_CUDA_ARCHITECTURES"], 12060);
  const dm::BuildTargets jp7 = dm::parse_cuda_architectures(args["JP7_CUDA_ARCHITECTURES"], 13000);
  ASSERT_EQ(jp6.sass.size(), 1u);
  EXPECT_EQ(jp6.sass[0].cc, 87);
  ASSERT_EQ(jp7.sass.size(), 1u);
  EXPECT_EQ(jp7.sass[0].cc, 110);
  // The guard's verdicts for the two images on the two Jetsons.
  auto verdict = [](const dm::BuildTargets& b, int major, int minor) {
    dm::CompatInput in;
    in.cc_major = major, in.cc_minor = minor, in.integrated = true;
    in.driver_version = in.runtime_version = b.toolkit_version;
    in.build = b;
    return dm::check_compat(in).level;
  };
  EXPECT_EQ(verdict(jp6, 8, 7), dm::CompatLevel::Ok);
  EXPECT_EQ(verdict(jp7, 11, 0), dm::CompatLevel::Ok);
  EXPECT_EQ(verdict(jp6, 11, 0), dm::CompatLevel::Fail);
  EXPECT_EQ(verdict(jp7, 8, 7), dm::CompatLevel::Fail);
  // BUILD=native (the default) selects each JetPack's own build and runtime stage; BUILD=cross-cpu a
  // build stage on the build machine's platform (no CUDA) and a Debian runtime.
  EXPECT_EQ(args["BUILD"], "native");
  std::string froms;
  for (const Instruction& i : ins)
    if (i.op == "FROM") froms += i.args + "\n";
  EXPECT_TRUE(has(froms, "build-jetpack${JETPACK} AS build-native\n")) << froms;
  EXPECT_TRUE(has(froms, "runtime-jetpack${JETPACK} AS runtime-native\n")) << froms;
  EXPECT_TRUE(has(froms, "--platform=$BUILDPLATFORM ${CROSS_BUILD_IMAGE} AS build-cross-cpu\n")) << froms;
  EXPECT_TRUE(has(froms, "${CROSS_RUNTIME_IMAGE} AS runtime-cross-cpu\n")) << froms;
  EXPECT_TRUE(has(froms, "build-${BUILD} AS build\n")) << froms;
  EXPECT_TRUE(has(froms, "runtime-${BUILD}\n")) << froms;
  for (const Stage& s : stages(ins)) {
    if (!has(s.from, "AS build-cross-cpu")) continue;
    std::string env;
    for (const Instruction& i : s.body)
      if (i.op == "ENV") env += i.args;
    EXPECT_TRUE(has(env, "DEPTHMASK_CROSS=${TARGETARCH}")) << "the cross stage builds for the target platform";
    EXPECT_FALSE(has(env, "DEPTHMASK_REQUIRE_CUDA=1")) << "the cross stage has no CUDA";
  }
  EXPECT_TRUE(fs::exists(repo() / "cmake" / "toolchains" / "debian-arm64.cmake"));
}

TEST(DeployFiles, TheSharedStepsUseInstallDepsAndTheReleaseOptions) {
  DM_REQUIRE_DEPLOY_FILES();
  const std::string steps = read_text(repo() / "scripts" / "docker-steps.sh");
  EXPECT_TRUE(has(steps, "bash scripts/install-deps.sh \"${deps[@]}\"\n"))
      << "docker-steps.sh build must install with install-deps.sh";
  EXPECT_TRUE(has(steps, "-C cmake/release-options.cmake"))
      << "docker-steps.sh must configure with the release options";
  EXPECT_TRUE(has(steps, "install-deps.sh\" --runtime ")) << "the runtime step must use install-deps.sh --runtime";
  // The README's commands (Makefile) and CI build with the same options and packages.
  const std::string make = read_text(repo() / "Makefile");
  EXPECT_TRUE(has(make, "bash scripts/install-deps.sh")) << "Makefile";
  EXPECT_TRUE(has(make, "-C cmake/release-options.cmake"))
      << "Makefile must configure with cmake/release-options.cmake";
  const std::string ci = read_text(repo() / ".ci" / "run");
  EXPECT_TRUE(has(ci, "bash scripts/install-deps.sh")) << ".ci/run";
  // CI builds and runs the images with a real engine (which run docker-steps.sh in them).
  EXPECT_TRUE(has(ci, "bash scripts/container-check.sh")) << ".ci/run must build and run the x86_64 image";
  EXPECT_TRUE(has(ci, "bash scripts/arm64-check.sh"))
      << ".ci/run must cross-build the arm64 image, run its tests under qemu and compare its outputs";
  // Offline builds: nothing in the build downloads.
  for (auto it = fs::recursive_directory_iterator(repo()); it != fs::recursive_directory_iterator(); ++it) {
    const std::string name = it->path().filename().string();
    if (it->is_directory() && (name.rfind("build", 0) == 0 || name[0] == '.' || name == "out" || name == "data")) {
      it.disable_recursion_pending();  // build trees hold CMake's own files, not ours
      continue;
    }
    if (name != "CMakeLists.txt" && it->path().extension() != ".cmake") continue;
    const std::string rel = fs::relative(it->path(), repo()).string();
    const std::string text = read_text(it->path());
    for (const char* bad : {"FetchContent", "ExternalProject", "file(DOWNLOAD", "CPMAddPackage"})
      EXPECT_FALSE(has(text, bad)) << rel << " uses " << bad << ": configure must not need the network";
  }
}

TEST(DeployFiles, ComposeServicesForRunAndLiveOnX86AndJetson) {
  DM_REQUIRE_DEPLOY_FILES();
  const YAML::Node doc = YAML::LoadFile((repo() / "docker" / "compose.yaml").string());
  const YAML::Node services = doc["services"];
  ASSERT_TRUE(services.IsMap());
  for (const char* name : {"run", "live", "run-jetson", "live-jetson"}) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(services[name]) << "compose.yaml has no service " << name;
    const YAML::Node s = merged(services[name]);
    ASSERT_TRUE(s.IsMap());
    const bool jetson = has(name, "jetson"), live = has(name, "live");
    const std::string dockerfile = s["build"]["dockerfile"].as<std::string>();
    EXPECT_EQ(dockerfile, jetson ? "docker/Dockerfile.jetson" : "docker/Dockerfile");
    EXPECT_TRUE(fs::exists(repo() / "docker" / s["build"]["context"].as<std::string>() / dockerfile));
    // The GPU through the NVIDIA runtime on both (a scalar: compose.ci.yaml replaces it with runc).
    EXPECT_EQ(s["runtime"].as<std::string>(""), "nvidia");
    std::string volumes;
    for (const auto& v : s["volumes"]) volumes += with_defaults(v.as<std::string>()) + "\n";
    EXPECT_TRUE(has(volumes, ":/data:ro") && has(volumes, ":/out\n") && has(volumes, ":/config:ro")) << volumes;
    std::vector<std::string> cmd;
    for (const auto& c : s["command"]) cmd.push_back(with_defaults(c.as<std::string>()));
    ASSERT_GE(cmd.size(), 3u);
    EXPECT_EQ(cmd[0], live ? "live" : "run");
    ASSERT_EQ(cmd[1], "--config");
    ASSERT_EQ(cmd[2].rfind("/config/", 0), 0u) << cmd[2];
    EXPECT_TRUE(fs::exists(repo() / "config" / cmd[2].substr(8))) << cmd[2] << " is not in config/";
    if (live) {
      std::string devices;
      for (const auto& d : s["devices"]) devices += with_defaults(d.as<std::string>());
      EXPECT_TRUE(has(devices, "/dev/video")) << "live needs the camera device";
      EXPECT_EQ(s["restart"].as<std::string>(""), "unless-stopped");
      EXPECT_TRUE(s["environment"]["DEPTHMASK_HEALTH_ENDPOINT"]) << "the healthcheck needs live's endpoint";
      const std::string joined = [&] {
        std::string j;
        for (const auto& c : cmd) j += c + " ";
        return j;
      }();
      EXPECT_TRUE(has(joined, "--publish tcp://0.0.0.0:5555")) << joined;
      EXPECT_TRUE(has(s["command"][4].as<std::string>(""), "${DEPTHMASK_SOURCE:-v4l2:///dev/video"))
          << "live's source is DEPTHMASK_SOURCE, the camera by default";
      EXPECT_EQ(s["network_mode"].as<std::string>(""), "host")
          << "subscribers reach the publisher on the host's network";
    } else {
      EXPECT_EQ(s["restart"].as<std::string>(""), "no");
    }
  }
}

// docker-compose 1.29 (Debian's) rejects a top-level name: the project is -p depthmask. The CI overlay
// turns the live service into one that runs anywhere: no GPU runtime, no network, no camera.
TEST(DeployFiles, ComposeFilesSuitCompose129AndTheCiOverlayDropsTheHardware) {
  DM_REQUIRE_DEPLOY_FILES();
  const YAML::Node doc = YAML::LoadFile((repo() / "docker" / "compose.yaml").string());
  EXPECT_FALSE(doc["name"]) << "docker-compose 1.29 rejects a top-level name: (use -p depthmask)";
  const YAML::Node ci = YAML::LoadFile((repo() / "docker" / "compose.ci.yaml").string());
  EXPECT_FALSE(ci["name"]);
  const YAML::Node live = ci["services"]["live"];
  ASSERT_TRUE(live.IsMap());
  EXPECT_EQ(live["runtime"].as<std::string>(""), "runc");
  EXPECT_EQ(live["network_mode"].as<std::string>(""), "none");
  ASSERT_TRUE(live["devices"] && live["devices"].size() == 1);
  EXPECT_EQ(with_defaults(live["devices"][0].as<std::string>()), "/dev/null:/dev/video0");
  std::string cmd;
  for (const auto& c : live["command"]) cmd += c.as<std::string>() + " ";
  EXPECT_TRUE(has(cmd, "--source synthetic://")) << cmd;
  EXPECT_TRUE(has(cmd, "--config /config/cpu.yaml")) << cmd;
}

TEST(DeployFiles, PlatformConfigsLoadAndSayWhy) {
  const std::map<std::string, dm::BackendKind> expected = {{"jetson-orin.yaml", dm::BackendKind::ZeroCopy},
                                                           {"jetson-thor.yaml", dm::BackendKind::ZeroCopy},
                                                           {"desktop-gpu.yaml", dm::BackendKind::Copy},
                                                           {"cpu.yaml", dm::BackendKind::Cpu},
                                                           {"default.yaml", dm::BackendKind::Auto}};
  for (const auto& [file, kind] : expected) {
    SCOPED_TRACE(file);
    const fs::path p = repo() / "config" / file;
    const dm::Config c = dm::load_config(p, {});
    EXPECT_EQ(c.backend.kind, kind);
    EXPECT_EQ(read_text(p).rfind("# ", 0), 0u) << file << " must open with comments saying why its settings suit it";
  }
  EXPECT_TRUE(has(read_text(repo() / "config" / "jetson-orin.yaml"), "Xavier"));
  EXPECT_TRUE(has(read_text(repo() / "config" / "jetson-thor.yaml"), "pageableMemoryAccess"));
  EXPECT_FALSE(fs::exists(repo() / "config" / "jetson.yaml")) << "split into jetson-orin.yaml and jetson-thor.yaml";
}

TEST(DeployFiles, DeployGuideNamesTheImagesTheDockerfilesUse) {
  DM_REQUIRE_DEPLOY_FILES();
  const std::string guide = read_text(repo() / "docs" / "DEPLOY.md");
  auto jetson = arg_defaults(parse_dockerfile(repo() / "docker" / "Dockerfile.jetson"));
  for (const char* arg : {"JP6_BUILD_IMAGE", "JP6_RUNTIME_IMAGE", "JP7_BUILD_IMAGE", "JP7_RUNTIME_IMAGE"})
    EXPECT_TRUE(has(guide, jetson[arg])) << "docs/DEPLOY.md does not name " << arg << " = " << jetson[arg];
  auto x86 = arg_defaults(parse_dockerfile(repo() / "docker" / "Dockerfile"));
  EXPECT_TRUE(has(guide, "nvidia/cuda:" + x86["CUDA_VERSION"] + "-runtime-ubuntu" + x86["UBUNTU_VERSION"]))
      << "docs/DEPLOY.md does not name the x86_64 runtime image";
}

// The Slurm example (examples/slurm): one array task per shard with `--shard auto`, requeueable, logs
// appended across attempts; the status job queued afterany (afterok never fires once a task failed);
// no GPU request in the script itself (a cluster without a gpu GRES rejects it). scripts/slurm-check.sh
// runs these files on a real cluster in CI.
TEST(DeployFiles, SlurmExamplesShardAutoRequeueAndAStatusJobAfterAny) {
  DM_REQUIRE_DEPLOY_FILES();
  const fs::path dir = repo() / "examples" / "slurm";
  for (const char* f : {"depthmask-array.sbatch", "depthmask-status.sbatch", "submit.sh", "README.md"})
    EXPECT_TRUE(fs::exists(dir / f)) << "examples/slurm/" << f;
  // The #SBATCH lines (sbatch reads them up to the first command) and the commands.
  auto sbatch_lines = [](const std::string& text) {
    std::vector<std::string> out;
    std::istringstream is(text);
    for (std::string l; std::getline(is, l);)
      if (l.rfind("#SBATCH ", 0) == 0) out.push_back(l.substr(8));
    return out;
  };
  auto any_of = [](const std::vector<std::string>& v, const std::string& prefix) {
    for (const std::string& s : v)
      if (s.rfind(prefix, 0) == 0) return true;
    return false;
  };
  const std::string array = read_text(dir / "depthmask-array.sbatch");
  const std::vector<std::string> opts = sbatch_lines(array);
  EXPECT_TRUE(any_of(opts, "--array=0-")) << "one task per shard, ids from 0";
  EXPECT_TRUE(any_of(opts, "--requeue"));
  EXPECT_TRUE(any_of(opts, "--open-mode=append")) << "a requeued task must not truncate its log";
  EXPECT_FALSE(any_of(opts, "--gres")) << "--gres=gpu:1 belongs on the command line where nodes have GPUs";
  EXPECT_TRUE(has(array, "--gres=gpu:1")) << "the script says where the GPU request goes";
  static const std::regex run_line(R"(\nexec "\$depthmask" run [^\n]*--shard auto)");
  EXPECT_TRUE(std::regex_search(array, run_line)) << "the task must exec `depthmask run ... --shard auto`";
  const std::string status = read_text(dir / "depthmask-status.sbatch");
  EXPECT_TRUE(has(status, "\" status \"$2\"")) << "the status job runs `depthmask status OUTPUT_DIR`";
  const std::string submit = read_text(dir / "submit.sh");
  EXPECT_TRUE(has(submit, "sbatch --parsable --array=")) << submit;
  EXPECT_TRUE(has(submit, "--dependency=\"afterany:$array\"")) << "the status job must wait with afterany";
  EXPECT_FALSE(has(submit, "afterok")) << "afterok is never satisfied once one task has failed";
  EXPECT_TRUE(has(read_text(dir / "README.md"), "RequeueExit=3,4,143"));
  // The project's cluster requeues the same codes the example documents.
  EXPECT_TRUE(has(read_text(repo() / "scripts" / "slurm-cluster.sh"), "\nRequeueExit=3,4,143\n"));
}

TEST(DeployFiles, KubernetesExamplesExistAndHaveTheirTest) {
  DM_REQUIRE_DEPLOY_FILES();
  const fs::path dir = repo() / "examples" / "kubernetes";
  for (const char* f : {"depthmask-job.yaml", "depthmask-job-jetson.yaml", "depthmask-status-job.yaml", "storage.yaml",
                        "config.yaml", "README.md"})
    EXPECT_TRUE(fs::exists(dir / f)) << "examples/kubernetes/" << f;
  // Field by field in Python (PyYAML), registered with ctest.
  EXPECT_TRUE(fs::exists(repo() / "tests" / "deploy" / "test_kubernetes.py"));
  EXPECT_TRUE(has(read_text(repo() / "tests" / "CMakeLists.txt"), "deploy/test_kubernetes.py"));
  EXPECT_TRUE(has(read_text(repo() / "scripts" / "install-deps.sh"), "python3-yaml"));
  EXPECT_TRUE(fs::exists(repo() / "scripts" / "k8s-index-check.sh"));
}

// CI runs the Kubernetes Job's containers in the image the container stage built, so after it.
TEST(DeployFiles, CiRunsTheKubernetesIndexCheckOnTheImageTheContainerStageBuilt) {
  DM_REQUIRE_DEPLOY_FILES();
  const std::string ci = read_text(repo() / ".ci" / "run");
  const size_t k8s = ci.find("\ntime bash scripts/k8s-index-check.sh depthmask:cuda13");
  ASSERT_NE(k8s, std::string::npos) << ".ci/run must call `time bash scripts/k8s-index-check.sh depthmask:cuda13`";
  const size_t containers = ci.find("\ntime bash scripts/container-check.sh");
  ASSERT_NE(containers, std::string::npos);
  EXPECT_LT(containers, k8s) << "the image is built by the container stage";
  EXPECT_TRUE(has(read_text(repo() / "scripts" / "container-check.sh"), "-t depthmask:cuda13"));
  const size_t tests = ci.find("\nmake test");
  ASSERT_NE(tests, std::string::npos);
  EXPECT_LT(k8s, tests);
}

// CI runs the Slurm check after the container stage and before the final test stages, timed.
TEST(DeployFiles, CiRunsTheSlurmCheckAfterTheContainers) {
  DM_REQUIRE_DEPLOY_FILES();
  const std::string ci = read_text(repo() / ".ci" / "run");
  const size_t slurm = ci.find("\ntime bash scripts/slurm-check.sh");
  ASSERT_NE(slurm, std::string::npos) << ".ci/run must call `time bash scripts/slurm-check.sh`";
  const size_t containers = ci.find("bash scripts/container-check.sh");
  ASSERT_NE(containers, std::string::npos);
  EXPECT_LT(containers, slurm) << "the Slurm stage comes after the container stage";
  const size_t tests = ci.find("\nmake test");
  ASSERT_NE(tests, std::string::npos);
  EXPECT_LT(slurm, tests) << "the Slurm stage comes before the final test stages";
}
