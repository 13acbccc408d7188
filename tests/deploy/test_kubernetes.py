#!/usr/bin/env python3
"""The Kubernetes examples (examples/kubernetes/*.yaml) read field by field.

    python3 tests/deploy/test_kubernetes.py [-v]

No cluster runs on the development or CI machines, so this reads the manifests as a cluster would
and checks what makes them work together and with the rest of the project: Indexed Jobs whose
completions, parallelism and DEPTHMASK_SHARD_COUNT agree; the command `depthmask run ... --shard auto`;
the volumes mounted where the command reads and writes; the GPU limit; the images docker/ builds; a
podFailurePolicy that follows the exit codes documented in docs/SCALE.md (and defined in
app/commands.h); a status Job over the same output. Exits 77 (ctest's skip) without PyYAML
(Debian: python3-yaml, which scripts/install-deps.sh installs).
"""

import os
import re
import shlex
import sys
import unittest

SKIP = 77
try:
    import yaml
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"SKIP: {sys.executable} cannot import yaml ({e}); install python3-yaml (scripts/install-deps.sh)")
    sys.exit(SKIP)

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
K8S = os.path.join(REPO, "examples", "kubernetes")
INDEXED = {"depthmask-job.yaml": "x86", "depthmask-job-jetson.yaml": "jetson"}


def read(*parts):
    with open(os.path.join(REPO, *parts), encoding="utf-8") as f:
        return f.read()


def load_all(name):
    with open(os.path.join(K8S, name), encoding="utf-8") as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def load_one(name):
    docs = load_all(name)
    assert len(docs) == 1, f"{name}: expected one object, found {len(docs)}"
    return docs[0]


def objects():
    """Every object of every manifest, by (kind, name)."""
    out = {}
    for name in sorted(os.listdir(K8S)):
        if name.endswith(".yaml"):
            for d in load_all(name):
                out[(d["kind"], d["metadata"]["name"])] = d
    return out


def argv(container):
    """The container's command line: command (the image's ENTRYPOINT where absent) + args."""
    cmd = container.get("command")
    if cmd is None:
        cmd = ["depthmask"]  # docker/Dockerfile's ENTRYPOINT
    return [str(c) for c in cmd] + [str(a) for a in container.get("args", [])]


def option(args, name):
    """The value after `name` in args (None when absent)."""
    for i, a in enumerate(args):
        if a == name and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return None


def without_threads(args):
    """args without `--set run.threads=N` (it follows each pod's CPU request)."""
    out = []
    for a in args:
        if a.startswith("run.threads=") and out and out[-1] == "--set":
            out.pop()
            continue
        out.append(a)
    return out


def env_of(container):
    return {e["name"]: e.get("value") for e in container.get("env", [])}


def mount_for(pod, container, path):
    """The (volumeMount, volume) that holds `path` in the container: the deepest mountPath above it."""
    best = None
    for m in container.get("volumeMounts", []):
        mp = m["mountPath"].rstrip("/") or "/"
        if path == mp or path.startswith(mp + "/"):
            if best is None or len(mp) > len(best["mountPath"]):
                best = m
    if best is None:
        return None, None
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    return best, vols.get(best["name"])


def source_of(volume):
    """What a volume shows: ("claim", name) or ("configMap", name)."""
    if "persistentVolumeClaim" in volume:
        return ("claim", volume["persistentVolumeClaim"]["claimName"])
    if "configMap" in volume:
        return ("configMap", volume["configMap"]["name"])
    return ("other", volume["name"])


def exit_codes_in_code():
    """The exit codes, written once in lib/base/include/depthmask/errors.h (namespace exit_codes): {value: name}."""
    text = read("lib", "base", "include", "depthmask", "errors.h")
    body = re.search(r"namespace exit_codes \{(.*?)\}  // namespace exit_codes", text, re.S)
    assert body, "errors.h has no `namespace exit_codes { ... }`"
    return {int(v): k for k, v in re.findall(r"\b(k\w+)\s*=\s*(\d+);", body.group(1))}


def documented_exit_codes():
    """docs/SCALE.md's exit-code table: {code: retry} with retry 'yes', 'no' or another word."""
    text = read("docs", "SCALE.md")
    section = text.split("## Exit codes for a scheduler", 1)
    assert len(section) == 2, "docs/SCALE.md has no section '## Exit codes for a scheduler'"
    rows = {}
    header = None
    for line in section[1].splitlines():
        if line.startswith("## "):
            break
        if not line.startswith("|"):
            continue
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if header is None:
            header = [c.lower() for c in cells]
            continue
        if set(cells[0]) <= set("-: "):
            continue
        rows[int(cells[0])] = cells[header.index("retry")].lower()
    assert rows, "docs/SCALE.md's exit-code table has no rows"
    return rows


def compose_images():
    """The image names docker/compose.yaml gives the builds of docker/Dockerfile and Dockerfile.jetson,
    with ${VAR:-default} as compose substitutes it with VAR unset."""
    text = read("docker", "compose.yaml")
    images = set(re.findall(r"^\s*image:\s*(\S+)", text, re.M))
    return {re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", i) for i in images}


class IndexedJobs(unittest.TestCase):
    def setUp(self):
        self.all = objects()

    def each(self):
        for name, platform in INDEXED.items():
            job = load_one(name)
            pod = job["spec"]["template"]["spec"]
            (c,) = [c for c in pod["containers"] if c["name"] == "depthmask"]
            yield name, platform, job, pod, c

    def test_indexed_job_shape(self):
        for name, _, job, pod, c in self.each():
            with self.subTest(name):
                self.assertEqual(job["apiVersion"], "batch/v1")
                self.assertEqual(job["kind"], "Job")
                spec = job["spec"]
                self.assertEqual(spec["completionMode"], "Indexed")
                n = spec["completions"]
                self.assertIsInstance(n, int)
                self.assertGreater(n, 1)
                self.assertEqual(spec["parallelism"], n, "one pod per shard at once")
                self.assertEqual(env_of(c).get("DEPTHMASK_SHARD_COUNT"), str(n),
                                 "DEPTHMASK_SHARD_COUNT must equal completions (the shard count)")
                self.assertIsInstance(spec.get("backoffLimitPerIndex"), int)
                self.assertGreaterEqual(spec["backoffLimitPerIndex"], 1)
                # backoffLimitPerIndex and podFailurePolicy need restartPolicy Never.
                self.assertEqual(pod["restartPolicy"], "Never")
                self.assertNotIn("backoffLimit", spec, "backoffLimitPerIndex counts retries per shard")

    def test_command_runs_the_shard_of_the_index(self):
        for name, _, _, _, c in self.each():
            with self.subTest(name):
                args = argv(c)
                self.assertEqual(args[:2], ["depthmask", "run"], shlex.join(args))
                self.assertEqual(option(args, "--shard"), "auto", shlex.join(args))
                self.assertIsNotNone(option(args, "--config"), shlex.join(args))
                self.assertIsNotNone(option(args, "--output"), shlex.join(args))
                # K comes from the Job itself (JOB_COMPLETION_INDEX): nothing may set it by hand.
                self.assertNotIn("JOB_COMPLETION_INDEX", env_of(c))

    def test_volumes_where_the_command_reads_and_writes(self):
        cm = self.all[("ConfigMap", "depthmask-config")]
        for name, _, _, pod, c in self.each():
            with self.subTest(name):
                args = argv(c)
                config = option(args, "--config")
                m, v = mount_for(pod, c, config)
                self.assertIsNotNone(v, f"{config} is on no volume")
                self.assertEqual(v["configMap"]["name"], "depthmask-config")
                self.assertEqual(config, m["mountPath"].rstrip("/") + "/" + "depthmask.yaml")
                self.assertIn("depthmask.yaml", cm["data"])
                run_config = yaml.safe_load(cm["data"]["depthmask.yaml"])
                # The input: read-only, from the dataset's claim.
                root = run_config["input"]["root"]
                m, v = mount_for(pod, c, root)
                self.assertIsNotNone(v, f"input.root {root} is on no volume")
                self.assertTrue(m.get("readOnly"), "the dataset is mounted read-only")
                self.assertEqual(v["persistentVolumeClaim"]["claimName"], "depthmask-dataset")
                # The output: writable, from the output claim; the YAML's output.dir agrees.
                out = option(args, "--output")
                self.assertEqual(run_config["output"]["dir"], out)
                m, v = mount_for(pod, c, out)
                self.assertIsNotNone(v, f"--output {out} is on no volume")
                self.assertFalse(m.get("readOnly", False), "the output volume must be writable")
                self.assertEqual(v["persistentVolumeClaim"]["claimName"], "depthmask-output")
                # Every claim the pod names is one of storage.yaml's, on storage all nodes share.
                for vol in pod["volumes"]:
                    if "persistentVolumeClaim" in vol:
                        claim = self.all.get(("PersistentVolumeClaim", vol["persistentVolumeClaim"]["claimName"]))
                        self.assertIsNotNone(claim, vol)
                        self.assertIn("ReadWriteMany", claim["spec"]["accessModes"])

    def test_threads_follow_the_cpu_request(self):
        # depthmask's default is a worker per core of the node; a pod that requests CPUs says how many.
        for name, _, _, _, c in self.each():
            with self.subTest(name):
                cpu = c.get("resources", {}).get("requests", {}).get("cpu")
                threads = [a.split("=", 1)[1] for a in argv(c) if a.startswith("run.threads=")]
                if cpu is None:
                    self.assertEqual(threads, [], "run.threads without a CPU request")
                else:
                    self.assertEqual(threads, [str(cpu)], f"requests {cpu} CPUs: run.threads={cpu}")

    def test_one_gpu_per_pod(self):
        for name, _, _, _, c in self.each():
            with self.subTest(name):
                self.assertEqual(c["resources"]["limits"]["nvidia.com/gpu"], 1)

    def test_images_are_the_ones_docker_builds(self):
        built = compose_images()
        self.assertIn("depthmask:cuda13", built)
        self.assertIn("depthmask:jetpack6", built)
        # The README's and DEPLOY.md's build commands tag the same names.
        self.assertIn("-t depthmask:cuda13", read("README.md"))
        self.assertIn("-t depthmask:jetpack6", read("docs", "DEPLOY.md"))
        for name, platform, _, _, c in self.each():
            with self.subTest(name):
                self.assertEqual(c["image"].rsplit("/", 1)[-1], "depthmask:cuda13" if platform == "x86" else "depthmask:jetpack6")
                self.assertIn(c["image"].rsplit("/", 1)[-1], built)

    def test_jetson_variant(self):
        job = load_one("depthmask-job-jetson.yaml")
        pod = job["spec"]["template"]["spec"]
        self.assertEqual(pod["runtimeClassName"], "nvidia")
        self.assertEqual(pod["nodeSelector"]["kubernetes.io/arch"], "arm64")
        # Apart from the platform's fields, the two Jobs are one: same shards, policy and command.
        x86 = load_one("depthmask-job.yaml")
        for key in ("completionMode", "completions", "parallelism", "backoffLimitPerIndex", "podFailurePolicy"):
            self.assertEqual(job["spec"][key], x86["spec"][key], key)
        c_j = pod["containers"][0]
        c_x = x86["spec"]["template"]["spec"]["containers"][0]
        self.assertEqual(without_threads(argv(c_j)), without_threads(argv(c_x)))
        self.assertEqual(c_j["volumeMounts"], c_x["volumeMounts"])

    def test_pod_failure_policy_follows_the_exit_codes(self):
        # The CLI's codes: errors.h's exit_codes, and 128 + SIGTERM (main() exits 128 + the signal that
        # stopped a run: 130 for SIGINT is kInterrupted, 143 for SIGTERM).
        in_code = exit_codes_in_code()
        in_code.setdefault(143, "SIGTERM")
        documented = documented_exit_codes()
        # The table documents exactly the codes the CLI has.
        self.assertEqual(set(documented), set(in_code),
                         "docs/SCALE.md's exit-code table and errors.h's exit_codes disagree")
        never = {code for code, retry in documented.items() if retry == "no"}
        retry = {code for code, retry in documented.items() if retry == "yes"}
        self.assertTrue({1, 2, 5} <= never, documented)
        self.assertTrue({3, 4, 143} <= retry, documented)
        for name, _, job, _, c in self.each():
            with self.subTest(name):
                rules = job["spec"]["podFailurePolicy"]["rules"]
                failing = set()
                for r in rules:
                    self.assertIn(r["action"], ("FailJob", "FailIndex", "Ignore", "Count"))
                    codes = r.get("onExitCodes")
                    if codes:
                        self.assertEqual(codes["containerName"], c["name"])
                        self.assertEqual(codes["operator"], "In")
                        self.assertTrue(set(codes["values"]) <= set(in_code) - {0},
                                        f"{codes['values']}: codes depthmask does not exit with")
                        if r["action"] in ("FailJob", "FailIndex"):
                            failing |= set(codes["values"])
                self.assertEqual(failing, never, "fail without a retry exactly on the codes a retry cannot change")
                self.assertFalse(failing & retry)
                # The configuration is every shard's: its error stops the whole Job.
                fail_job = {v for r in rules if r["action"] == "FailJob" for v in r["onExitCodes"]["values"]}
                self.assertEqual(fail_job, {2})
                # Evictions and preemptions do not use up a shard's retries.
                self.assertTrue(any(r["action"] == "Ignore" and {"type": "DisruptionTarget"} in r.get("onPodConditions", [])
                                    for r in rules))


class StatusJob(unittest.TestCase):
    def test_status_over_the_same_output(self):
        job = load_one("depthmask-status-job.yaml")
        self.assertEqual(job["kind"], "Job")
        spec = job["spec"]
        self.assertNotIn("completionMode", spec)
        self.assertEqual(spec.get("backoffLimit"), 0, "the verdict is the exit code: no retries")
        pod = spec["template"]["spec"]
        (c,) = pod["containers"]
        args = argv(c)
        self.assertEqual(args[:2], ["depthmask", "status"], shlex.join(args))
        run = load_one("depthmask-job.yaml")
        run_pod = run["spec"]["template"]["spec"]
        run_c = run_pod["containers"][0]
        run_args = argv(run_c)
        self.assertEqual(args[2], option(run_args, "--output"), "status reads the folder the shards write")
        self.assertEqual(option(args, "--config"), option(run_args, "--config"))
        # The output, the configuration and the dataset (status lists the input) from the same sources.
        root = yaml.safe_load(load_one("config.yaml")["data"]["depthmask.yaml"])["input"]["root"]
        for path in (args[2], option(args, "--config"), root):
            _, v = mount_for(pod, c, path)
            _, run_v = mount_for(run_pod, run_c, path)
            self.assertIsNotNone(v, f"{path} is on no volume of the status Job")
            self.assertEqual(source_of(v), source_of(run_v), path)
        self.assertNotIn("nvidia.com/gpu", c.get("resources", {}).get("limits", {}), "status needs no GPU")
        self.assertEqual(c["image"], run_c["image"])


class Documents(unittest.TestCase):
    def test_readme_and_the_index_check(self):
        readme = read("examples", "kubernetes", "README.md")
        for word in ("backoffLimitPerIndex", "1.29", "podFailurePolicy", "k8s-index-check.sh", "depthmask-status-job.yaml"):
            self.assertIn(word, readme)
        check = read("scripts", "k8s-index-check.sh")
        self.assertIn("examples/kubernetes/depthmask-job.yaml", check)
        self.assertIn("JOB_COMPLETION_INDEX", check)
        self.assertIn("--network none", check)


if __name__ == "__main__":
    unittest.main()
