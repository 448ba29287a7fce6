"""The built wheel installs into a fresh venv with no network, and a PySpark job there runs on the jar it carries.

The route, and why:

* The wheel is built from a copy of `python/` (setuptools' in-tree `build/` folder could hold a jar of an older
  version, which would ride along), with the dev venv's setuptools and no index: `--no-build-isolation`.
* PySpark is published only as a source distribution, so there is no PySpark wheel to install offline unless one
  is made. Downloading one needs the network, and pip's own cache is an internal layout that `PIP_NO_CACHE_DIR`
  empties; what `make deps` always leaves behind is PySpark and py4j installed in `.venv`. So the wheelhouse is
  made from those installed files (each distribution's RECORD says which files are its own) and kept in
  `~/.cache/spark-kinesis/wheelhouse/`, keyed by their versions, because repacking ~500 MB is slow on 2 cores.
* The fresh venv is made `--without-pip` (ensurepip costs 10-40 s here and proves nothing about this wheel) and
  does not see the dev venv's packages; the dev venv's pip installs into it with `--python`, which runs pip under
  the fresh interpreter against that venv only, with `--no-index`: everything comes from the two local folders.
* Every step runs with no proxies, no pip configuration and no Spark settings from the environment, and the job
  sets no `spark.jars.packages`, so Spark resolves nothing. Where strace can run, every step runs under it and
  the test fails on any connect() or sendto() to an address off the loopback (other than the Kinesis endpoint's).
"""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib.metadata
import io
import ipaddress
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import uuid
import warnings
import zipfile
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import boto3
import pytest

PYTHON_DIR = Path(__file__).resolve().parents[1]
JOB = Path(__file__).resolve().parent / "wheel_job.py"
# What pyspark-kinesis needs at run time: pyspark, which needs py4j (pyspark's extras are not wanted). If this
# closure grows, `pip install --no-index` fails naming what is missing.
RUNTIME_DEPENDENCIES = ("pyspark", "py4j")
# Bumped when the repacking below changes, so cached wheelhouses made by an older version are not reused.
WHEELHOUSE_FORMAT = 1
RECORDS = 400


# --- no network ---------------------------------------------------------------------------------------------------
def offline_env(extra_path: Path | None = None) -> dict[str, str]:
    """The environment of every step: no proxies, no pip configuration or index, nothing of the dev venv or of a
    Spark installation, and Spark bound to loopback whatever the host name resolves to."""
    dropped = re.compile(r"(?i)^(.*_proxy|PYTHON.*|PIP_.*|VIRTUAL_ENV|CONDA_.*|SPARK_.*|PYSPARK_.*|HADOOP_CONF_DIR)$")
    env = {key: value for key, value in os.environ.items() if not dropped.match(key)}
    dev_bin = str(Path(sys.executable).parent)
    path = [p for p in env.get("PATH", "").split(os.pathsep) if p and p != dev_bin]
    if extra_path is not None:
        path.insert(0, str(extra_path))
    env.update(
        PATH=os.pathsep.join(path),
        PYTHONNOUSERSITE="1",
        PIP_CONFIG_FILE=os.devnull,
        PIP_NO_INDEX="1",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        SPARK_LOCAL_IP="127.0.0.1",
    )
    return env


_INET = re.compile(r'sin_port=htons\((\d+)\), sin_addr=inet_addr\("([^"]+)"\)')
_INET6 = re.compile(r'sin6_port=htons\((\d+)\).*?inet_pton\(AF_INET6, "([^"]+)"')


@dataclass
class NetworkAudit:
    """Runs commands under strace and collects every address they connect() or sendto(), per step.

    strace follows every process and thread the command starts (pip's subprocesses, spark-submit, the JVM), so
    the audit sees the JVM's sockets as well as Python's. Without a working strace the steps still run, untraced.
    """

    log_dir: Path
    traced: bool = field(init=False)
    addresses: dict[str, list[tuple[str, int]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        probe = ["strace", "-f", "-qq", "-o", os.devnull, "true"]
        self.traced = shutil.which("strace") is not None and subprocess.run(probe, capture_output=True).returncode == 0
        if not self.traced:
            warnings.warn("strace cannot run here: the offline wheel test does not audit connections", stacklevel=2)

    def run(self, step: str, command: list[str], timeout: float, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        """Runs `command` (traced when possible), records the addresses it reached, and returns its result.

        The command runs in a session of its own, so a timeout ends it with every process it started (the JVM
        under spark-submit, which would outlive a killed strace or Python parent).
        """
        log = self.log_dir / f"{step}.strace"
        if self.traced:
            # --seccomp-bpf stops the process only on the traced calls, so the JVM runs at nearly full speed.
            command = [
                "strace",
                "-f",
                "--seccomp-bpf",
                "-qq",
                "-e",
                "signal=none",
                "-e",
                "trace=connect,sendto,sendmsg",
                "-o",
                str(log),
                *command,
            ]
        with subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True, **kwargs
        ) as process:
            try:
                stdout, stderr = process.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.communicate()
                raise
        if self.traced:
            self.addresses[step] = connected_addresses(log.read_text(errors="replace"))
        return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)

    def off_loopback(self, allowed: Collection[str] = ()) -> dict[str, list[tuple[str, int]]]:
        """Per step, the addresses reached that are neither loopback (nor unspecified) nor in `allowed`."""
        return {
            step: bad
            for step, found in self.addresses.items()
            if (bad := [(a, p) for a, p in found if not is_local(a) and a not in allowed])
        }


def connected_addresses(strace_log: str) -> list[tuple[str, int]]:
    """The IPv4 and IPv6 (address, port) pairs in the calls of an strace log; Unix sockets carry none."""
    return [(a, int(p)) for p, a in _INET.findall(strace_log)] + [(a, int(p)) for p, a in _INET6.findall(strace_log)]


def is_local(address: str) -> bool:
    """Loopback or unspecified (which Linux connects to this host), IPv4-mapped IPv6 included."""
    ip = ipaddress.ip_address(address.split("%")[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback or ip.is_unspecified


def checked(result: subprocess.CompletedProcess[str], what: str) -> subprocess.CompletedProcess[str]:
    """`result`, or a failure showing the ends of its output."""
    assert result.returncode == 0, (
        f"{what} failed ({result.returncode}):\n{result.stdout[-4000:]}\n{result.stderr[-6000:]}"
    )
    return result


# --- the wheelhouse: PySpark and py4j repacked from the dev venv --------------------------------------------------
def cache_root() -> Path:
    """The folder the Makefile keeps downloads in (its CACHE default)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "spark-kinesis"


def _wheel_tag(wheel_metadata: str) -> str:
    """The compressed tag of a wheel's file name (`py2.py3-none-any`) from the `Tag:` lines of its WHEEL file."""
    tags = [line.split(":", 1)[1].strip().split("-") for line in wheel_metadata.splitlines() if line.startswith("Tag:")]
    return "-".join(".".join(sorted({t[i] for t in tags})) for i in range(3))


def repack_installed(name: str, out_dir: Path) -> Path:
    """Writes a wheel of the installed distribution `name` from the files its RECORD lists; returns its path.

    Files under site-packages keep their place; scripts go to `<name>.data/scripts` (with a `#!python` line for
    pip to point at the new interpreter) and other files under the venv to `<name>.data/data`. Compiled `.pyc`
    files, console scripts pip generates from entry points, and what the installer added to `.dist-info` are left
    out. File modes are kept: PySpark runs `pyspark/bin/spark-submit`, which must stay executable.
    """
    dist = importlib.metadata.distribution(name)
    site = Path(str(dist.locate_file("")))
    scripts = Path(sysconfig.get_path("scripts"))
    prefix = Path(sys.prefix)
    files = list(dist.files or [])
    info_dir = next(f.parts[0] for f in files if f.parts[0].endswith(".dist-info"))
    stem = f"{re.sub(r'[-_.]+', '_', dist.metadata['Name']).lower()}-{dist.version}"
    data = f"{stem}.data"
    generated = {ep.name for ep in dist.entry_points if ep.group in ("console_scripts", "gui_scripts")}
    installer_files = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}

    entries: list[tuple[str, Path]] = []
    for file in files:
        source = Path(os.path.normpath(site / file))
        if source.suffix == ".pyc" or "__pycache__" in source.parts:
            continue
        if file.parts[0] == info_dir and file.name in installer_files:
            continue
        if source.is_relative_to(site):
            entries.append((source.relative_to(site).as_posix(), source))
        elif source.is_relative_to(scripts):
            if source.name not in generated:
                entries.append((f"{data}/scripts/{source.relative_to(scripts).as_posix()}", source))
        elif source.is_relative_to(prefix):
            entries.append((f"{data}/data/{source.relative_to(prefix).as_posix()}", source))
        else:
            raise ValueError(f"{name}: {file} is installed outside {prefix}; cannot place it in a wheel")
    entries.sort(key=lambda entry: entry[0].startswith(info_dir))  # .dist-info last, as the wheel format asks

    wheel = out_dir / f"{stem}-{_wheel_tag(dist.read_text('WHEEL') or '')}.whl"
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    with zipfile.ZipFile(wheel, "w") as archive:
        for arcname, source in entries:
            payload = source.read_bytes()
            if arcname.startswith(f"{data}/scripts/") and re.match(rb"#![^\n]*python", payload):
                payload = b"#!python" + payload[payload.index(b"\n") :]
            info = zipfile.ZipInfo.from_file(source, arcname)
            # Jars are zip files already: storing them saves most of the time, deflating them gains nothing.
            info.compress_type = zipfile.ZIP_STORED if arcname.endswith(".jar") else zipfile.ZIP_DEFLATED
            archive.writestr(info, payload)
            digest = base64.urlsafe_b64encode(hashlib.sha256(payload).digest()).rstrip(b"=").decode()
            writer.writerow([arcname, f"sha256={digest}", len(payload)])
        writer.writerow([f"{info_dir}/RECORD", "", ""])
        archive.writestr(f"{info_dir}/RECORD", record.getvalue(), compress_type=zipfile.ZIP_DEFLATED)
    return wheel


def wheelhouse() -> Path:
    """Wheels of PySpark and py4j as installed in the dev venv, made once per set of versions and cached."""
    key = "_".join(f"{n}-{importlib.metadata.version(n)}" for n in RUNTIME_DEPENDENCIES)
    folder = cache_root() / "wheelhouse" / f"{key}_py{sys.version_info[0]}{sys.version_info[1]}_f{WHEELHOUSE_FORMAT}"
    if folder.is_dir() and len(list(folder.glob("*.whl"))) == len(RUNTIME_DEPENDENCIES):
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    # Written aside and renamed into place, so an interrupted run never leaves a wheelhouse that looks complete.
    partial = Path(tempfile.mkdtemp(prefix=f"{folder.name}.partial-", dir=folder.parent))
    try:
        for name in RUNTIME_DEPENDENCIES:
            repack_installed(name, partial)
        shutil.rmtree(folder, ignore_errors=True)
        os.rename(partial, folder)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return folder


# --- the wheel, and the fresh venv it goes into -------------------------------------------------------------------
def source_jars() -> list[Path]:
    """The connector jars `make python-jar` put in the package folder, Spark 3.5's (2.12) then Spark 4's (2.13):
    what the wheel must carry."""
    jars = sorted((PYTHON_DIR / "pyspark_kinesis" / "jars").glob("spark-kinesis-assembly_*.jar"))
    assert [j.name.split("-")[2] for j in jars] == ["assembly_2.12", "assembly_2.13"], (
        f"expected a 2.12 and a 2.13 connector jar in python/pyspark_kinesis/jars, found {jars}: "
        "run 'make build && make python-jar'"
    )
    return jars


def source_jar() -> Path:
    """The jar a job on this venv's PySpark (4.x, Scala 2.13) loads."""
    return source_jars()[1]


def sha256(path: Path) -> str:
    """The hex SHA-256 of a file, read in chunks (PySpark's jars are large)."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass
class Installation:
    """A fresh venv with the built wheel installed offline, and how it got there."""

    work: Path
    wheel: Path
    venv: Path
    python: Path
    site_packages: Path
    audit: NetworkAudit
    install_output: str


@pytest.fixture(scope="module")
def installation() -> Iterator[Installation]:
    """Builds the wheel, makes a fresh venv in a temporary folder and installs the wheel there with no index."""
    with tempfile.TemporaryDirectory(prefix="pyspark-kinesis-wheel-") as tmp:
        work = Path(tmp)
        audit = NetworkAudit(work)
        env = offline_env()
        source = work / "src"
        shutil.copytree(
            PYTHON_DIR,
            source,
            ignore=shutil.ignore_patterns("build", "dist", "*.egg-info", "__pycache__", ".mypy_cache", "tests"),
        )
        checked(
            audit.run(
                "build",
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "wheel",
                    "--no-deps",
                    "--no-index",
                    "--no-build-isolation",
                    "--no-cache-dir",
                    "--wheel-dir",
                    str(work / "dist"),
                    str(source),
                ],
                timeout=300,
                env=env,
                cwd=work,
            ),
            "building the wheel",
        )
        wheel = next((work / "dist").glob("pyspark_kinesis-*.whl"))

        venv = work / "venv"
        checked(
            audit.run("venv", [sys.executable, "-m", "venv", "--without-pip", str(venv)], timeout=120, env=env),
            "creating the venv",
        )
        python = venv / "bin" / "python"
        wheels = wheelhouse()
        install = checked(
            audit.run(
                "install",
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "--python",
                    str(python),
                    "install",
                    "--no-index",
                    "--no-cache-dir",
                    "--find-links",
                    str(wheels),
                    str(wheel),
                ],
                timeout=600,
                env=env,
                cwd=work,
            ),
            "installing the wheel",
        )
        site = Path(
            checked(
                subprocess.run(
                    [str(python), "-I", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                    capture_output=True,
                    text=True,
                    timeout=60,
                    env=env,
                ),
                "asking the venv for its site-packages",
            ).stdout.strip()
        )
        yield Installation(work, wheel, venv, python, site, audit, install.stdout)


def test_the_wheel_carries_the_connector_jar_and_installs_offline(installation: Installation) -> None:
    expected = source_jars()
    with zipfile.ZipFile(installation.wheel) as wheel:
        jars = sorted(n for n in wheel.namelist() if n.endswith(".jar"))
        assert jars == [f"pyspark_kinesis/jars/{jar.name}" for jar in expected]
        for name, jar in zip(jars, expected):
            assert hashlib.sha256(wheel.read(name)).hexdigest() == sha256(jar), f"the wheel carries another {name}"
        assert "pyspark_kinesis/py.typed" in wheel.namelist()

    cfg = (installation.venv / "pyvenv.cfg").read_text()
    assert re.search(r"include-system-site-packages\s*=\s*false", cfg), cfg
    for jar in expected:
        installed_jar = installation.site_packages / "pyspark_kinesis" / "jars" / jar.name
        assert installed_jar.is_file() and sha256(installed_jar) == sha256(jar)
    assert (installation.site_packages / "pyspark" / "bin" / "spark-submit").stat().st_mode & 0o111
    assert "Successfully installed" in installation.install_output, installation.install_output
    assert installation.audit.off_loopback() == {}, "a build or install step reached the network"


@pytest.fixture()
def stream(kinesis_endpoint: str) -> str:
    """A new 2-shard stream on the session's Kinesis endpoint."""
    client = boto3.client(
        "kinesis",
        endpoint_url=kinesis_endpoint,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )
    name = f"wheel-{uuid.uuid4().hex[:8]}"
    client.create_stream(StreamName=name, ShardCount=2)
    client.get_waiter("stream_exists").wait(StreamName=name, WaiterConfig={"Delay": 0.2})
    return name


def test_a_job_in_the_fresh_venv_writes_and_reads_back_on_the_installed_jar(
    installation: Installation, kinesis_endpoint: str, stream: str
) -> None:
    job_dir = installation.work / "job"
    job_dir.mkdir()
    env = offline_env(extra_path=installation.python.parent)
    env["PYSPARK_PYTHON"] = env["PYSPARK_DRIVER_PYTHON"] = str(installation.python)
    # -I: the job sees neither the environment's PYTHON* settings nor its own folder (python/tests) on sys.path.
    run = installation.audit.run(
        "job",
        [str(installation.python), "-I", str(JOB), kinesis_endpoint, stream, str(job_dir), str(RECORDS)],
        timeout=300,
        env=env,
        cwd=job_dir,
    )
    checked(run, "the job")
    lines = [line for line in run.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, run.stdout[-4000:] + run.stderr[-4000:]
    result = json.loads(lines[-1][len("RESULT ") :])

    expected = sorted([f"key-{i % 10}", f"record-{i}"] for i in range(RECORDS))
    assert sorted(result["records"]) == expected, f"{len(result['records'])} of {RECORDS} records came back"

    site = installation.site_packages
    for module, path in result["modules"].items():
        assert Path(path).is_relative_to(site), f"{module} was imported from {path}, not from the fresh venv"
    assert result["distributions"] == ["py4j", "pyspark", "pyspark-kinesis"], "the venv sees other packages"
    dev_venv = str(Path(sys.executable).parents[1])
    assert not [e for e in result["sys_path"] if e.startswith((dev_venv, str(PYTHON_DIR)))], result["sys_path"]
    installed_jar = site / "pyspark_kinesis" / "jars" / source_jar().name
    assert result["spark_jars"] == str(installed_jar)
    assert result["provider_class"] == "io.github.sparkkinesis.KinesisProvider"
    assert Path(result["provider_origin"]) == installed_jar

    audit = installation.audit
    if audit.traced:
        endpoint = urlsplit(kinesis_endpoint)
        port = endpoint.port or (443 if endpoint.scheme == "https" else 80)
        # An endpoint off this machine (KINESIS_ENDPOINT) is the one remote address the job may reach.
        allowed = {str(info[4][0]) for info in socket.getaddrinfo(endpoint.hostname or "", port)}
        assert audit.off_loopback(allowed) == {}, "the job reached the network"
        # The audit saw the JVM's own sockets: the connector's connections to the endpoint are in it.
        assert any(p == port for _, p in audit.addresses["job"]), audit.addresses["job"][:20]


def test_the_audit_reads_addresses_from_strace_and_flags_those_off_the_loopback(tmp_path: Path) -> None:
    log = "\n".join(
        [
            '7 connect(3, {sa_family=AF_INET, sin_port=htons(4567), sin_addr=inet_addr("127.0.0.1")}, 16) = 0',
            "7 connect(5, {sa_family=AF_INET6, sin6_port=htons(4567), sin6_flowinfo=htonl(0), "
            'inet_pton(AF_INET6, "::ffff:127.0.0.1", &sin6_addr), sin6_scope_id=0}, 28) = -1 EINPROGRESS',
            '8 connect(6, {sa_family=AF_UNIX, sun_path="/var/run/nscd/socket"}, 110) = -1 ENOENT',
            '8 sendto(7, "x", 1, 0, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("192.0.2.53")}, 16) = 1',
            "9 connect(8, {sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0), "
            'inet_pton(AF_INET6, "2001:db8::1", &sin6_addr), sin6_scope_id=0}, 28) = -1 ENETUNREACH',
        ]
    )
    found = connected_addresses(log)
    assert sorted(found) == sorted(
        [("127.0.0.1", 4567), ("::ffff:127.0.0.1", 4567), ("192.0.2.53", 53), ("2001:db8::1", 443)]
    )
    audit = NetworkAudit(tmp_path)
    audit.addresses = {"job": found, "install": [("::1", 80), ("0.0.0.0", 1)]}
    assert audit.off_loopback() == {"job": [("192.0.2.53", 53), ("2001:db8::1", 443)]}
    assert audit.off_loopback({"192.0.2.53", "2001:db8::1"}) == {}
