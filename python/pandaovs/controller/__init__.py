"""The Panda OpenFlow controller (openflow/controller/README.md).

    config   configuration and policy files: reading and checking
    diff     what a bridge must change (pure, no os-ken)
    ofp      os-ken objects: the panda action, flows, error texts
    app      the os-ken application (sessions, bundles, REST)
    cli      run | check | status | sync

Only ofp and app import os-ken; 'check' and the tests of config and diff
run without it.
"""
