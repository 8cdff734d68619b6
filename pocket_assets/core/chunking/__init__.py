"""Parents and children: token-accurate cuts at the strongest boundary, with exact offsets."""
