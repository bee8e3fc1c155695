"""The results store: a run is a directory that pandas and DuckDB read directly.

One module each: :mod:`.layout` (what a run directory holds: its names, the tables'
schemas, where kept samples go, ``RunError``), :mod:`.segments` (the segment index and the
files of each table), :mod:`.read` (``load``, ``load_many``, ``query``, the manifest) and
:mod:`.write` (``RunWriter``, kept samples, removing a run).

Layout of ``RUN_DIR``::

    manifest.json        plan, fixture, firmware hello, software, versions (every version a
                         figure depends on: results/versions.py), calibration, host, times, seed
    windows.parquet/     one row per trigger window, with its point's factors (segments)
    points.parquet/      one row per point: status, counts, mean/median/std/95 % CI per op
    segments.json        the segment index: every segment of the two tables, its rows and SHA-256
    parts/<id>/          one finished point not yet consolidated (windows.parquet, point.parquet)
    captures/<point>/    the samples kept of some of a point's windows (``--keep-captures``;
                         the folder named by the point, ``layout.capture_dir_name``):
                         w0003.csv is window 3 of windows.parquet, in the rig's CSV
                         layout (``rig analyze`` reads it), w0003.npz the same
                         samples exactly (``rig reanalyze`` reads them); the policy is the
                         manifest's ``keep_captures``
    reanalysis/          what ``rig reanalyze`` wrote: its figures beside the stored ones
    .lock                held by the one writer of the run

``windows.parquet`` and ``points.parquet`` are directories of segments
(``seg-000001.parquet``, ...), a Parquet dataset that ``pandas.read_parquet`` reads whole in
one call. (Runs written before segments hold single files there; they are read as they are
and become directories when resumed.)

``segments.json`` lists every segment with its row count and SHA-256, rewritten atomically
with each merge: :func:`load` and :meth:`RunWriter.resume` check the segments against it
and refuse, naming the file, a segment that is missing, altered or not listed, so a lost
segment never passes unseen. A merge first records its new segments as ``pending`` (they
duplicate parts that are still there), renames them into place, then lists them; readers
skip a pending segment and the next writer removes one a crash left. A run written before
segment indexes is read unverified (with a warning) and indexed when resumed.

Writing is atomic per point: :meth:`RunWriter.write_point` writes both tables of a point
into a temporary directory, syncs them and renames the directory into ``parts/`` (one
``rename``, atomic on POSIX). A crash leaves either the whole point or nothing. The point's
key (its factors without ``batch_n``) names the directory, so a point that is already stored
is never written twice: :meth:`RunWriter.done` tells a resuming sweep what to skip.
Every ``consolidate_every`` points, and at :meth:`RunWriter.close`, the parts are folded
into one new segment of each table; nothing already folded is read or rewritten, so a merge
costs the same at point 256 as at point 25 600 and the writer's memory stays flat. Readers
(:func:`load`) take the segments plus any parts, dropping duplicates by key, so a run is
readable while a sweep is writing it and after a crash at any instant (a crash between a
new segment and the removal of its parts leaves duplicates of the newest segment only,
which the next writer removes).

All quantities are SI (s, J, W); per-op columns are the window's figure divided by
``batch_n``.

Flagged windows: the statistics of a point in ``points.parquet`` are taken over the windows
of its estimate (:func:`energyrig.results.stats.summarise_per_op`, as ``rig run`` and the report
take them): every window but those that failed an integrity check
(:func:`energyrig.domain.in_estimate`: corrupt samples, an uncounted loss, a baseline at the
floor), which ``windows_excluded`` counts and ``excluded_reason`` names (each flag's
count). Other flagged windows stay in. Nothing is dropped unseen: ``n_flagged`` counts the
windows with any flag and ``flag_list`` lists them (a list column: the tables' typed
columns and their version are :mod:`.schema`, docs/results.md), the report shows them, and each window, the
left-out ones too, keeps its own flags in ``windows.parquet`` so an analysis can exclude any
of them. Values that are not finite (a window flagged ``no_baseline`` has no net energy) are
left out of that column's statistics only.
"""
