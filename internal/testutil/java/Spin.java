// Spin calls work often enough for the JIT to compile it, says "ready",
// and then waits, idle, to be attached to, until stdin closes.
public class Spin {
    static long work(long x) {
        for (int i = 0; i < 100; i++) {
            x = x * 31 + i;
        }
        return x;
    }

    public static void main(String[] args) throws Exception {
        long s = 0;
        for (int i = 0; i < 200_000; i++) {
            s += work(s);
        }
        System.out.println("ready " + (s & 1));
        System.out.flush();
        while (System.in.read() >= 0) {
        }
    }
}
