/* early.c -- runs with early_lib.so, whose thread was started before the
** runtime patched the import slots. */
void early_go(void);

int main(void)
{
  early_go();
  return 0;
}
