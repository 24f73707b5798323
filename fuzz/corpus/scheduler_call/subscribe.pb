1

medemoRbweb