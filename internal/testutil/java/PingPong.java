import java.util.concurrent.locks.LockSupport;

// PingPong is the classic park/unpark ping-pong: two threads, each parks
// until the other unparks it, handing a turn back and forth. It prints
// "ready" once both run and then, every second, how many round trips
// were made; it exits when stdin closes.
public class PingPong {
    static volatile int turn;
    static volatile long trips;
    static Thread ping, pong;

    static class Player implements Runnable {
        final int me;

        Player(int me) {
            this.me = me;
        }

        public void run() {
            for (;;) {
                while (turn != me) {
                    LockSupport.park(this);
                }
                if (me == 0) {
                    trips++;
                }
                turn = 1 - me;
                LockSupport.unpark(me == 0 ? pong : ping);
            }
        }
    }

    public static void main(String[] args) throws Exception {
        ping = new Thread(new Player(0), "ping");
        pong = new Thread(new Player(1), "pong");
        ping.setDaemon(true);
        pong.setDaemon(true);
        ping.start();
        pong.start();
        System.out.println("ready");
        System.out.flush();
        Thread stdin = new Thread(() -> {
            try {
                while (System.in.read() >= 0) {
                }
            } catch (java.io.IOException e) {
            }
            System.exit(0);
        });
        stdin.setDaemon(true);
        stdin.start();
        for (;;) {
            Thread.sleep(1000);
            System.out.println("trips " + trips);
            System.out.flush();
        }
    }
}
