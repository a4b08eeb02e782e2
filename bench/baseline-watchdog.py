#!/usr/bin/env python3
"""Baseline (c) of bench/run: the hot folder a Python programmer would write
with watchdog and pikepdf. Events are handled one at a time on watchdog's
dispatch thread.

    baseline-watchdog.py export DROP OUT DONE screen|print
    baseline-watchdog.py print  DROP SPOOL DONE print QUEUE     (CUPS_SERVER set)

export: pikepdf flatten_annotations(WHICH), save to OUT/.NAME.tmp, rename to
        OUT/NAME, move the original to DONE.
print:  the same into SPOOL, `lp -d QUEUE`, remove, move the original to DONE.
SIGTERM stops it.
"""
import os
import signal
import subprocess
import sys
import threading

import pikepdf
from watchdog.events import FileSystemEventHandler
from watchdog.observers import Observer


class Handler(FileSystemEventHandler):
    def __init__(self, mode, drop, out, done, which, queue):
        self.mode, self.drop, self.out, self.done, self.which, self.queue = mode, drop, out, done, which, queue
        self.failed = os.path.join(drop, "failed")

    # A file moved in from elsewhere is reported as created; one written in
    # place as created, then closed. Whatever is still in the drop folder when
    # its event comes is processed.
    def on_created(self, event):
        self.handle(event.src_path, event.is_directory)

    def on_closed(self, event):
        self.handle(event.src_path, event.is_directory)

    def on_moved(self, event):
        self.handle(event.dest_path, event.is_directory)

    def handle(self, path, is_directory):
        if is_directory or os.path.dirname(path) != self.drop:
            return
        name = os.path.basename(path)
        if name.startswith(".") or name.endswith(".tmp") or not os.path.isfile(path):
            return
        tmp = os.path.join(self.out, "." + name + ".tmp")
        try:
            with pikepdf.open(path) as pdf:
                pdf.flatten_annotations(self.which)
                pdf.save(tmp)
            if self.mode == "print":
                subprocess.run(["lp", "-d", self.queue, "-t", name, tmp], check=True, stdout=subprocess.DEVNULL)
                os.remove(tmp)
            else:
                os.rename(tmp, os.path.join(self.out, name))
            os.rename(path, os.path.join(self.done, name))
        except Exception as error:  # noqa: BLE001 - a hot folder keeps going
            print(f"failed: {name}: {error}", file=sys.stderr)
            try:
                os.remove(tmp)
            except OSError:
                pass
            try:
                os.rename(path, os.path.join(self.failed, name))
            except OSError:
                pass


def main():
    mode, drop, out, done, which = sys.argv[1:6]
    queue = sys.argv[6] if len(sys.argv) > 6 else None
    for d in (out, done, os.path.join(drop, "failed")):
        os.makedirs(d, exist_ok=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    observer = Observer()
    observer.schedule(Handler(mode, os.path.abspath(drop), out, done, which, queue), drop, recursive=False)
    observer.start()
    while not stop.wait(1):
        pass
    observer.stop()
    observer.join()


if __name__ == "__main__":
    main()
