"""What the benchmarks share. Each script (``bench/<name>.py``, run as
``python -m bench.<name>``) imports from here, from govsi, and from ``testkit`` where it
crawls the simulated web; never from another script, never from ``tests``.

- ``webs``: the simulated webs the benchmarks crawl (deterministic for a seed);
- ``ministry``, ``dedup_pairs``: government-style pages, and labelled pairs of them;
- ``measure``: time, CPU and memory of processes, read from /proc;
- ``postgres``: a throwaway PostgreSQL (``testkit/pgcluster.py``'s), started;
- ``crawl``, ``checks``, ``politeness``, ``plain_spider``: crawls as the benchmarks run
  them, and what is checked and measured of them;
- ``sysinfo``, ``results``: the machine and code measured, and where the figures go.
"""
