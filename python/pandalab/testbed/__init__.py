"""The testbed: Panda vs PIAS vs FIFO on one machine (thesis ch. 5);
testbed/run.py is its command line, testbed/README.md its guide.

    config       command line -> RunConfig (typed), TrialConfig
    runner       stages 1-3, aggregation, output
    experiments  the trial plan of --quick / --full
    trial        one trial: launch, watch, stop, collect, check
    topology     PM1 and PM2 on the shaped bridge (a pandalab.lab.Lab)
    model        stage 2: tools/panda-model -> policies
    report, stats, plots, pcap, profiles, calibrate
"""
