/*
** api_unwind.cpp -- built with no capprof flag: a C++ exception thrown by
** a qsort comparator through msvcrt's qsort (an intercepted call) and caught
** in main, three times; then the API is used normally. Under `capprof run`
** the program must behave exactly as without it (run-wine.sh compares).
*/
#include <windows.h>
#include <stdio.h>
#include <stdlib.h>

static int thrown;

static int throwing(const void *a, const void *b)
{
  GetTickCount();
  if (*(const int *)a != *(const int *)b) throw 42 + thrown;
  return 0;
}

int main()
{
  int v[8] = { 5, 3, 8, 1, 9, 2, 7, 4 };
  int caught = 0;
  for (int i = 0; i < 3; i++) {
    try {
      qsort(v, 8, sizeof v[0], throwing);
    } catch (int e) {
      caught += e == 42 + thrown;
      thrown++;
    }
  }
  for (int i = 0; i < 4; i++) GetTickCount();
  printf("caught %d of %d\n", caught, thrown);
  return caught == 3 ? 0 : 1;
}
