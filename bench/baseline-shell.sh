#!/bin/bash
# Baseline (b) of bench/run: the hot folder a sysadmin would write in shell.
# One `inotifywait -m` feeding a loop that runs qpdf on each file, one at a time.
#
#   baseline-shell.sh export DROP OUT DONE screen|print
#   baseline-shell.sh print  DROP SPOOL DONE print QUEUE     (CUPS_SERVER set)
#
# export: qpdf --flatten-annotations=WHICH into OUT/.NAME.tmp, mv to OUT/NAME,
#         mv the original to DONE (so OUT/NAME exists only when complete).
# print:  qpdf --flatten-annotations=WHICH into SPOOL, lp -d QUEUE, rm, mv the
#         original to DONE.
# Stops when inotifywait is ended (its output closes).
set -u
mode=$1 drop=$2 out=$3 done_dir=$4 which=$5 queue=${6:-}
failed=$drop/failed
mkdir -p "$out" "$done_dir" "$failed"

inotifywait -m -q -e close_write -e moved_to --format '%f' "$drop" |
  while IFS= read -r f; do
    case $f in .* | *.tmp) continue ;; esac
    [ -f "$drop/$f" ] || continue
    tmp=$out/.$f.tmp
    qpdf --flatten-annotations="$which" "$drop/$f" "$tmp"
    rc=$? # 3: succeeded with warnings
    if [ $rc -ne 0 ] && [ $rc -ne 3 ]; then
      rm -f "$tmp"
      mv "$drop/$f" "$failed/"
      continue
    fi
    if [ "$mode" = print ]; then
      lp -d "$queue" -t "$f" "$tmp" >/dev/null && rm -f "$tmp"
    else
      mv "$tmp" "$out/$f"
    fi
    mv "$drop/$f" "$done_dir/"
  done
