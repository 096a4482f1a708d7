mod fixtures;
