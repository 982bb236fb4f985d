"""Hosts that differ from their peers. The lines are real NCCL_DEBUG=INFO lines from public pastes of three jobs
(hosts lccn09/lccn19 of one cluster, gpu0301 of another); put together they are the kind of log where one node
runs another driver."""

from firstfault.hosts import differing_hosts

SAME = [
    "lccn09:2520136:2520136 [0] NCCL INFO cudaDriverVersion 12080",
    "lccn19:2471278:2471278 [7] NCCL INFO cudaDriverVersion 12080",
    "lccn09:2520140:2520140 [4] NCCL INFO cudaDriverVersion 12080",
    "lccn19:2471267:2471267 [0] NCCL INFO cudaDriverVersion 12080",
]
ODD = "gpu0301:842624:842624 [0] NCCL INFO cudaDriverVersion 12060"
WATCHDOG = ("[rank0]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank 0] Watchdog caught collective operation "
            "timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST, NumelIn=131072000, NumelOut=131072000, Timeout(ms)=600000) "
            "ran for 600081 milliseconds before timing out.")


def test_a_host_whose_value_differs_from_the_majority_is_named_with_both_values(engine):
    report = engine.analyze_text("\n".join([*SAME, ODD, WATCHDOG]))
    facts = differing_hosts(list(report.events))
    assert facts == ["CUDA driver differs between hosts: gpu0301 has 12060, while 2 other host(s) have 12080"]
    assert facts[0] in report.diagnoses[0].evidence_for


def test_hosts_that_agree_add_nothing_and_context_alone_is_no_failure(engine):
    report = engine.analyze_text("\n".join(SAME))
    assert differing_hosts(list(report.events)) == [] and report.diagnoses == ()


def test_one_against_one_lists_both(engine):
    report = engine.analyze_text("\n".join([SAME[0], ODD]))
    assert differing_hosts(list(report.events)) == ["CUDA driver differs between hosts (gpu0301: 12060; lccn09: 12080)"]


# NVIDIA/nccl#1634, as quoted: only pairs with node 04 hung; node 04 loads HPC-X's SHARP plugin, node 11 none.
PLUGINS = ["HGX-H100-11:18226:18274 [5] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal network "
           "plugin.",
           "HGX-H100-04:589474:589541 [0] NCCL INFO Plugin Path : /opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so"]


def test_hosts_that_differ_where_nothing_failed_are_a_possible_cause(engine):
    for lines in (PLUGINS, [SAME[0], ODD]):
        top = engine.analyze_text("\n".join(lines)).diagnoses[0]
        assert (top.id, top.possible, top.initiator.line) == ("host-config-differs", True, 1)
        assert top.confidence <= 0.3 and any("differs between hosts" in e for e in top.evidence_for)
    # One host's lines alone compare with nothing.
    assert engine.analyze_text(PLUGINS[1]).diagnoses == ()
