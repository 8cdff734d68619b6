"""The gates every chunk passes before export, their report, and the numbers a maintainer scans."""
