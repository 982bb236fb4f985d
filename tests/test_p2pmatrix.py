"""cuda-samples' p2pBandwidthLatencyTest pasted: its matrices read as numbers. Real pastes (sources in the comments)."""

from firstfault.diagnosis import possible_because

# stas00/ml-engineering#1: three RTX A6000 whose P2P copies run slower than copies staged through the host.
SLOW = """P2P Connectivity Matrix
     D\\D     0      1      2
     0\t     1     1     1
     1\t     1     1     1
     2\t     1     1     1
Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)
   D\\D     0      1      2 
     0 673.20  13.15  13.15 
     1  12.99 673.20  22.20 
     2  13.00  21.98 673.78 
Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)
   D\\D     0      1      2 
     0 673.49   2.60   1.58 
     1   2.12 672.33   1.70 
     2   2.12   1.60 673.78 
Bidirectional P2P=Disabled Bandwidth Matrix (GB/s)
   D\\D     0      1      2 
     0 677.73  18.01  18.02 
"""
# luigifcruz/stelline, docs/quickstart/validated-hardware/server/puget-threadripper-pro-wrx90.md: two RTX 6000 Ada
# with ACS off, P2P faster than staged copies.
HEALTHY = """Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)
   D\\D     0      1
     0 801.28  22.23
     1  22.32 813.80
Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)
   D\\D     0      1
     0 800.15  26.32
     1  26.32 831.12
Bidirectional P2P=Disabled Bandwidth Matrix (GB/s)
   D\\D     0      1
     0 800.29  31.42
     1  31.45 808.33
Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)
   D\\D     0      1
     0 802.94  52.11
     1  52.10 806.22
"""


def test_p2p_copies_slower_than_staged_ones_are_a_possible_acs_or_iommu_cause(engine):
    top = engine.analyze_text(SLOW).diagnoses[0]
    assert (top.id, top.possible, top.initiator.line) == ("p2p-acs-iommu-hang", True, 11)
    assert "median 1.91 GB/s, against 13.15 GB/s" in top.evidence_for[0]
    # Said as a lead from what the input shows, not as a harmless line that counts for want of another
    assert possible_because(top).startswith("Nothing in the input failed")


def test_a_healthy_test_stays_quiet(engine):
    assert not engine.analyze_text(HEALTHY).diagnoses


def test_a_matrix_cut_before_its_rows_decides_nothing(engine):
    # The P2P=Enabled header with no rows under it: nothing to compare.
    assert not engine.analyze_text(SLOW.split("     0 673.49")[0]).diagnoses


def test_the_test_run_through_a_launcher_reads_the_same(engine):
    # `srun --label` and pdsh put the task or host before every line the test prints
    for label in ("0: ", "node3: "):
        labelled = "\n".join(label + line for line in SLOW.splitlines())
        top = engine.analyze_text(labelled).diagnoses[0]
        assert (top.id, top.initiator.line) == ("p2p-acs-iommu-hang", 11)
        assert "median 1.91 GB/s, against 13.15 GB/s" in top.evidence_for[0]
