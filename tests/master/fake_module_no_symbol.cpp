// A shared library that loads fine but is not an allocator module: it lacks the entry symbol.
extern "C" int harvest_fake_module_not_an_allocator() {
  return 42;
}
