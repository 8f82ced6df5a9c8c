// The entry point of a layer check: the executable links one folder's objects whole with the
// folders below it, so a call into a higher layer is an undefined symbol (cmake/layers.cmake).
int main() { return 0; }
