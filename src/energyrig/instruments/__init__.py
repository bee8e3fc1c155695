"""Power instruments, one subpackage per family, each whole (config, transport, protocol,
processing, emulator, family record); the transports they share beside them (``streaming``,
``visa``) and what every emulator shares in ``sim``.

Each family keeps transport (serial port, VISA session, subprocess) apart from protocol
(commands, frames) apart from processing (pure functions over whole arrays).
"""
