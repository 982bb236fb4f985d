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


# NVIDIA/nccl-tests#188, as pasted: this node's socket transport receives a connection from a peer on the IB transport.
TRANSPORT_MISMATCH = [
    "user:16899:16949 [0] NCCL INFO Channel 01/0 : 9[1] -> 0[0] [receive] via NET/Socket/0",
    "user:16899:16961 [0] misc/socket.cc:441 NCCL WARN socketFinalizeAccept: wrong type 4 != 3",
    "user:16899:16961 [0] NCCL INFO misc/socket.cc:561 -> 3",
    "user:16899:16961 [0] NCCL INFO misc/socket.cc:586 -> 3",
]
# NVIDIA/nccl#1808, lines 9-10 of the paste: an HTTP client ("GET /met") on the proxy's port, not a peer.
FOREIGN_CLIENT = [
    "2025-08-12 09:37:03.463948 worker-9 >> [2025-08-12 01:37:03] :166:1226 [0] misc/socket.cc:484 NCCL WARN "
    "socketFinalizeAccept: wrong magic 74656d2f20544547 != 7970663b906d70b9",
    "2025-08-12 09:37:14.267026 worker-9 >> :166:1835 [0] NCCL INFO Channel 00/0 : 80[0] -> 87[7] via P2P/CUMEM",
]


def test_nccls_socket_handshake_tells_a_peer_on_another_transport_from_a_foreign_client(engine):
    top = engine.analyze_text("\n".join(TRANSPORT_MISMATCH)).diagnoses[0]
    assert (top.id, top.initiator.line, top.possible) == ("host-config-differs", 2, False)
    top = engine.analyze_text("\n".join(FOREIGN_CLIENT)).diagnoses[0]
    assert (top.id, top.initiator.line) == ("nccl-foreign-connection", 1)
