"""Power instruments, one subpackage per family, and their emulators in ``sim``.

Each family keeps transport (serial port, VISA session, subprocess) apart from protocol
(commands, frames) apart from processing (pure functions over whole arrays).
"""
