"""The test tiers, by file (see conftest.py, which marks each test with one)."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent

EXTERNAL = {
    "test_conformance.py",
    "test_format_big.py",
    "test_fresh_install.py",
    "test_typescript_client.py",
    "hosts/test_hosts_bundle.py",
    "hosts/test_hosts_install.py",
    "runtime/test_deploy_files.py",
    "runtime/test_replicas_generated.py",
    "runtime/test_shared.py",
    "runtime/test_shared_faults.py",
    "runtime/test_shared_replicas.py",
    "runtime/test_tasks_count.py",
    "runtime/test_tasks_store.py",
    "runtime/test_tasks_replicas.py",
    "runtime/test_tasks_typescript.py",
    "runtime/test_sharing.py",
    "surface/test_ci.py",
}
# hypothesis and fuzzers: many generated inputs each (seconds to a minute and a half a file)
FUZZ = {
    "test_fastpath.py",
    "test_fuzz_loader.py",
    "test_fuzz_openapi.py",
    "test_hostile_input.py",
    "test_names.py",
    "test_reliability_generator.py",
}
E2E = {
    "test_auth_transports.py",
    "test_build.py",
    "test_format.py",
    "test_client_typing.py",
    "test_context_features.py",
    "test_corpus_regressions.py",
    "test_fidelity.py",
    "test_generated_examples.py",
    "test_idle_sessions.py",
    "test_openapi_e2e.py",
    "test_openapi_real.py",
    "test_property_manifests.py",
    "test_property_regressions.py",
    "test_quality.py",
    "test_reliability_server.py",
    "test_transports.py",
    "test_vendored_runtime.py",
    "hosts/test_hosts_call.py",
    "hosts/test_hosts_call_env.py",
    "hosts/test_hosts_dev.py",
    "hosts/test_hosts_first_steps.py",
    "hosts/test_hosts_offer.py",
    "hosts/test_hosts_project.py",
    "hosts/test_hosts_quickstart.py",
    "runtime/test_codemode_e2e.py",
    "runtime/test_compact_definitions.py",
    "runtime/test_credentials_e2e.py",
    "runtime/test_debug_bodies.py",
    "runtime/test_rt_stdio.py",
    "runtime/test_transport_edges.py",
    "runtime/test_rt_stdio_wire.py",
    "runtime/test_sandbox_escapes.py",
    "runtime/test_telemetry.py",
    "runtime/test_tasks_generated.py",
    "security/test_issue16.py",
    "security/test_issue30_auth.py",
    "security/test_issue30_hosts.py",
    "security/test_issue30_limits.py",
    "security/test_seams.py",
    "surface/test_check.py",
}


def tier(path: Path) -> str:
    name = path.resolve().relative_to(TESTS).as_posix()
    if name in EXTERNAL:
        return "external"
    if name in FUZZ:
        return "fuzz"
    return "e2e" if name in E2E else "unit"
