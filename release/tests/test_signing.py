"""`make dist-sign` (what `make dist GPG_KEY=...` runs): a detached ASCII-armoured signature beside every artifact,
as Maven Central requires, checked with a throwaway key made for the test in a GnuPG home of its own."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from release.tests.conftest import DIST, REPO


@pytest.mark.skipif(shutil.which("gpg") is None, reason="gpg is not installed: signing is documented, not required")
def test_dist_sign_signs_every_artifact_but_the_checksums(tmp_path: Path) -> None:
    home = tmp_path / "gnupg"
    home.mkdir(mode=0o700)
    env = {**os.environ, "GNUPGHOME": str(home)}
    gpg = ["gpg", "--batch", "--pinentry-mode", "loopback", "--passphrase", ""]
    try:
        subprocess.run(
            [*gpg, "--quick-gen-key", "spark-kinesis release test <release-test@example.invalid>", "ed25519", "sign",
             "1d"],
            env=env, check=True, capture_output=True,
        )  # fmt: skip
        listing = subprocess.run(
            ["gpg", "--batch", "--with-colons", "--list-secret-keys"],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        key = next(line.split(":")[9] for line in listing.splitlines() if line.startswith("fpr:"))
        copy = tmp_path / "dist"
        shutil.copytree(DIST / "maven", copy / "maven")
        files = sorted(p for p in copy.rglob("*") if p.is_file())
        subprocess.run(
            ["make", "--no-print-directory", "-C", str(REPO), "dist-sign", f"DIST={copy}", f"GPG_KEY={key}"],
            env={k: v for k, v in env.items() if k != "MAKEFLAGS"},
            check=True,
            capture_output=True,
        )
        signed = [p for p in files if p.suffix not in (".md5", ".sha1")]
        assert signed and all(p.name.endswith((".jar", ".pom")) for p in signed)
        for path in signed:
            verify = subprocess.run(
                ["gpg", "--batch", "--verify", f"{path}.asc", str(path)], env=env, capture_output=True, text=True
            )
            assert verify.returncode == 0, (path.name, verify.stderr)
        unsigned_checksums = [p for p in files if p.suffix in (".md5", ".sha1") and Path(f"{p}.asc").exists()]
        assert unsigned_checksums == []
    finally:
        subprocess.run(["gpgconf", "--kill", "gpg-agent"], env=env, capture_output=True)
