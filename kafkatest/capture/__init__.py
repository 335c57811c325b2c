"""Capture a sample of real topics into a file, personal data replaced, and replay it in a
test (``kafkatest capture``, `replay_capture`, or `seed` given the file; docs/how-to/capture.md)."""

from kafkatest.capture.ranges import CaptureError
from kafkatest.seeding.capture_file import CaptureFormatError, is_capture_file
from kafkatest.seeding.replay import ReplayedCapture, replay_capture

__all__ = [
    "CaptureError",
    "CaptureFormatError",
    "ReplayedCapture",
    "is_capture_file",
    "replay_capture",
]
