package io.lossprobe.tcp;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.Locale;

/**
 * Native epoll where it is available (and TCP_INFO with it), plain NIO otherwise or when asked. A TCP twin of
 * udp-probe's choice: transports never import each other.
 */
enum TcpIo {
    EPOLL, NIO;

    /** {@code auto} picks epoll when Netty's native library loads. */
    static TcpIo choose(String option) {
        String o = option == null ? "auto" : option.toLowerCase(Locale.ROOT);
        return switch (o) {
            case "epoll" -> {
                if (!Epoll.isAvailable()) {
                    throw new IllegalStateException("native epoll is not available: " + Epoll.unavailabilityCause());
                }
                yield EPOLL;
            }
            case "nio" -> NIO;
            case "auto" -> Epoll.isAvailable() ? EPOLL : NIO;
            default -> throw new IllegalArgumentException(TcpSettings.IO + " must be auto, epoll or nio, not '"
                + option + "'");
        };
    }

    /** One event loop: every channel of one side shares it, so one side's accounting never needs a lock. */
    EventLoopGroup newGroup(String threadName) {
        DefaultThreadFactory threads = new DefaultThreadFactory(threadName, true);
        return new MultiThreadIoEventLoopGroup(1, threads,
            this == EPOLL ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
    }

    Class<? extends ServerChannel> serverChannel() {
        return this == EPOLL ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    }

    Class<? extends SocketChannel> socketChannel() {
        return this == EPOLL ? EpollSocketChannel.class : NioSocketChannel.class;
    }
}
