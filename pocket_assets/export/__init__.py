"""The files the phone and other tools read, and the id history that keeps old citations resolving."""
