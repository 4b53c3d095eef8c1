"""Helper processes and the process pool: plain ``python -c`` children over two pipes and
the length-framed messages they speak (``frames``: the pool's, the archive's and crawldb's
writer's), and the pool that runs heavy pure work off the reactor (``pool``), each worker
process's loop (``loop``) and its memory bound (``bound``)."""
